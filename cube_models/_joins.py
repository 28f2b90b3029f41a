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


def build_join_tree(model: SemanticModel, cubes: list[str]) -> JoinTree:
    """The join tree Cube builds: try each cube as root, shortest paths to the others, fewest joins wins."""
    cubes = list(dict.fromkeys(cubes))
    best: tuple[JoinTree, dict[str, int]] | None = None
    for root in cubes:
        paths, count = _shortest_paths(model, root)
        if any(c not in paths for c in cubes):
            continue
        joins: list[Join] = []
        for cube in cubes:
            for join in paths[cube]:
                if join not in joins:
                    joins.append(join)
        tree = JoinTree(root, tuple(joins))
        if best is None or len(tree.joins) < len(best[0].joins):
            best = (tree, count)
    if best is None:
        raise QueryError(f"can't find a join path to join {', '.join(repr(c) for c in cubes)} "
                         "(Cube joins go from the cube that declares them)")
    tree, count = best
    ambiguous = [c for c in cubes if count.get(c, 1) > 1]
    if ambiguous:
        raise QueryError(f"ambiguous join path from '{tree.root}' to {', '.join(repr(c) for c in ambiguous)}: "
                         "several shortest paths exist; query through a view or remove a join")
    return tree


def _multiplies(cube: str, join: Join) -> bool:
    return (join.source == cube and join.relationship == "one_to_many") or \
        (join.target == cube and join.relationship == "many_to_one")


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
