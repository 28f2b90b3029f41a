"""Cube's join graph: directed edges from the declaring cube, shortest paths, multiplication factors."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from cube_models.errors import QueryError
from cube_models.model import Join, SemanticModel


@dataclass(frozen=True)
class JoinTree:
    root: str
    joins: tuple[Join, ...]

    def cubes(self) -> list[str]:
        return [self.root, *(j.target for j in self.joins)]


def _shortest_paths(model: SemanticModel, root: str) -> tuple[dict[str, list[Join]], dict[str, int]]:
    """BFS over directed joins: one shortest path per reachable cube, and how many shortest paths exist."""
    paths: dict[str, list[Join]] = {root: []}
    count: dict[str, int] = {root: 1}
    depth = {root: 0}
    queue = deque([root])
    while queue:
        node = queue.popleft()
        for join in model.cubes[node].joins:
            nxt = join.target
            if nxt not in depth:
                depth[nxt] = depth[node] + 1
                paths[nxt] = [*paths[node], join]
                count[nxt] = count[node]
                queue.append(nxt)
            elif depth[nxt] == depth[node] + 1:
                count[nxt] += count[node]
    return paths, count


Hint = str | list[str]


def build_join_tree(model: SemanticModel, hints: list[Hint]) -> JoinTree:
    """The join tree Cube builds from join hints: each hint (a cube, or a view's join path as a chain) is tried
    as root; the other hints are reached by shortest directed paths (a chain hop by hop); fewest joins wins."""
    hints = [h if isinstance(h, str) else list(h) for h in hints]
    unique: list[Hint] = []
    for h in hints:
        if h not in unique:
            unique.append(h)
    best: tuple[JoinTree, list[str]] | None = None
    for candidate in unique:
        chain = [candidate] if isinstance(candidate, str) else candidate
        root, rest = chain[0], ([chain[1:]] if len(chain) > 1 else [])
        others = rest + [h for h in unique if h is not candidate]
        tree, ambiguous = _tree_for_root(model, root, others)
        if tree is not None and (best is None or len(tree.joins) < len(best[0].joins)):
            best = (tree, ambiguous)
    if best is None:
        names = sorted({c for h in unique for c in ([h] if isinstance(h, str) else h)})
        raise QueryError(
            f"can't find a join path to join {', '.join(repr(c) for c in names)} "
            "(Cube joins go from the cube that declares them)"
        )
    tree, ambiguous = best
    if ambiguous:
        raise QueryError(
            f"ambiguous join path from '{tree.root}' to {', '.join(repr(c) for c in ambiguous)}: "
            "several shortest paths exist; query through a view or remove a join"
        )
    return tree


def _tree_for_root(model: SemanticModel, root: str, others: list[Hint]) -> tuple[JoinTree | None, list[str]]:
    joins: list[Join] = []
    ambiguous: list[str] = []
    searches: dict[str, tuple[dict[str, list[Join]], dict[str, int]]] = {}
    for hint in others:
        previous = root
        for target in [hint] if isinstance(hint, str) else hint:
            if target == previous:
                continue
            if previous not in searches:
                searches[previous] = _shortest_paths(model, previous)
            paths, count = searches[previous]
            if target not in paths:
                return None, []
            if count[target] > 1 and target not in ambiguous:
                ambiguous.append(target)
            for join in paths[target]:
                if join not in joins:
                    joins.append(join)
            previous = target
    return JoinTree(root, tuple(joins)), ambiguous


def _multiplies(cube: str, join: Join) -> bool:
    return (join.source == cube and join.relationship == "one_to_many") or (
        join.target == cube and join.relationship == "many_to_one"
    )


def multiplied(cube: str, tree: JoinTree) -> bool:
    """Cube's findMultiplicationFactorFor: can rows of ``cube`` repeat in this join tree?"""
    visited: set[str] = set()

    def walk(current: str) -> bool:
        if current in visited:
            return False
        visited.add(current)
        adjacent = [j for j in tree.joins if current in (j.source, j.target)]

        def other(j: Join) -> str:
            return j.target if j.source == current else j.source

        if any(_multiplies(current, j) and other(j) not in visited for j in adjacent):
            return True
        return any(walk(other(j)) for j in adjacent)

    return walk(cube)
