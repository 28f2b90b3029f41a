"""The warehouse join graph for detail queries and shortest join paths over it.

Edges are the foreign keys of the Cube model's joins (``router.detail.schema.build_catalog``).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass


@dataclass(frozen=True)
class FkEdge:
    """``child.column`` references ``parent.parent_column`` (many-to-one from child to parent)."""

    child: str
    column: str
    parent: str
    parent_column: str


@dataclass(frozen=True)
class Step:
    """One hop of a join path: from ``left`` to ``right`` over ``edge``; ``fans_out`` when one-to-many."""

    left: str
    right: str
    edge: FkEdge

    @property
    def fans_out(self) -> bool:
        return self.edge.parent == self.left


class JoinGraph:
    def __init__(self, edges: tuple[FkEdge, ...] = ()) -> None:
        self.edges = edges
        self._adj: dict[str, list[tuple[str, FkEdge]]] = {}
        for e in edges:
            self._adj.setdefault(e.child, []).append((e.parent, e))
            self._adj.setdefault(e.parent, []).append((e.child, e))

    def path(self, start: str, goal: str) -> list[Step]:
        """Shortest path ``start`` -> ``goal`` (BFS; many-to-one hops are tried first)."""
        if start == goal:
            return []
        seen = {start}
        queue: deque[tuple[str, list[Step]]] = deque([(start, [])])
        while queue:
            node, steps = queue.popleft()
            neighbours = sorted(self._adj.get(node, []), key=lambda ne: ne[1].parent != ne[0])
            for nxt, edge in neighbours:
                if nxt in seen:
                    continue
                route = [*steps, Step(node, nxt, edge)]
                if nxt == goal:
                    return route
                seen.add(nxt)
                queue.append((nxt, route))
        raise LookupError(f"no join path from {start} to {goal}")
