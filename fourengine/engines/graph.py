"""Engine G: the join graph of ``semlayer.join_edge``, its depth-limited walk and a Steiner join tree.

The edge list is fetched in one query and cached in memory (TTL); the walk and the
planner run in Python. Tables are table asset ids (``table:<name>``); edges whose
ends are bare names are prefixed. Between two tables the edge with the lowest
fan-out risk is used. The join tree is the classic shortest-path Steiner
approximation: start from the strongest terminal, repeatedly attach the nearest
remaining terminal by its cheapest path (weights: low 1, medium 1.5, high 3),
paths at most ``depth`` hops long.
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections import defaultdict, deque

from psycopg import AsyncConnection

from fourengine.models import TABLE_PREFIX, JoinEdge, JoinPlan

RISK_WEIGHT = {"low": 1.0, "medium": 1.5, "high": 3.0}
RISK_ORDER = {"low": 0, "medium": 1, "high": 2}

_SQL = "SELECT edge_id, left_table, right_table, on_sql, relationship, fanout_risk FROM semlayer.join_edge"


def table_id(name: str) -> str:
    return name if name.startswith(TABLE_PREFIX) else f"{TABLE_PREFIX}{name}"


class JoinGraph:
    """Undirected view of the join edges; the best (lowest-risk) edge per table pair."""

    def __init__(self, edges: list[JoinEdge]) -> None:
        self.edges = edges
        self.best: dict[frozenset[str], JoinEdge] = {}
        self.adjacent: dict[str, set[str]] = defaultdict(set)
        for edge in edges:
            pair = frozenset((edge.left, edge.right))
            current = self.best.get(pair)
            if current is None or RISK_ORDER.get(edge.fanout_risk, 2) < RISK_ORDER.get(current.fanout_risk, 2):
                self.best[pair] = edge
            self.adjacent[edge.left].add(edge.right)
            self.adjacent[edge.right].add(edge.left)

    def weight(self, a: str, b: str) -> float:
        return RISK_WEIGHT.get(self.best[frozenset((a, b))].fanout_risk, 3.0)

    def walk(self, seeds: list[str], depth: int) -> dict[str, int]:
        """Tables reachable from ``seeds`` within ``depth`` hops, with their hop count."""
        hops = {s: 0 for s in seeds if s in self.adjacent or s.startswith(TABLE_PREFIX)}
        queue = deque(hops)
        while queue:
            node = queue.popleft()
            if hops[node] >= depth:
                continue
            for nxt in self.adjacent.get(node, ()):
                if nxt not in hops:
                    hops[nxt] = hops[node] + 1
                    queue.append(nxt)
        return hops

    def _nearest(self, tree: list[str], targets: set[str], depth: int) -> tuple[str, list[str]] | None:
        """Cheapest path (<= depth hops) from the tree to any target: (target, path from tree to target).

        Ties go to paths starting nearer the root (tree nodes in insertion order): dimensions attach to
        the table of the measure rather than through another dimension.
        """
        best: dict[str, float] = {n: 0.0 for n in tree}
        heap: list[tuple[float, int, int, str, tuple[str, ...]]] = [
            (0.0, 0, rank, n, (n,)) for rank, n in enumerate(tree)
        ]
        heapq.heapify(heap)
        while heap:
            cost, hops, rank, node, path = heapq.heappop(heap)
            if node in targets:
                return node, list(path)
            if hops >= depth or cost > best.get(node, float("inf")):
                continue
            for nxt in self.adjacent.get(node, ()):
                ncost = cost + self.weight(node, nxt)
                if ncost < best.get(nxt, float("inf")):
                    best[nxt] = ncost
                    heapq.heappush(heap, (ncost, hops + 1, rank, nxt, (*path, nxt)))
        return None

    def plan(self, terminals: list[str], depth: int) -> JoinPlan:
        """A join tree connecting ``terminals`` (the first is the root), preferring low fan-out edges."""
        terminals = list(dict.fromkeys(terminals))
        if not terminals:
            return JoinPlan()
        tree = [terminals[0]]
        edges: list[JoinEdge] = []
        bridges: list[str] = []
        remaining = set(terminals[1:])
        unreachable: list[str] = []
        while remaining:
            found = self._nearest(tree, remaining, depth)
            if found is None:
                unreachable.extend(t for t in terminals if t in remaining)
                break
            target, path = found
            for a, b in itertools.pairwise(path):
                edges.append(self.best[frozenset((a, b))])
                if b not in tree and b not in terminals:
                    bridges.append(b)
                if b not in tree:
                    tree.append(b)
            remaining.discard(target)
            remaining -= set(tree)
        connected = [t for t in terminals if t not in unreachable]
        return JoinPlan(tables=connected + bridges, edges=edges, bridge_tables=bridges, unreachable=unreachable)


class GraphCache:
    """One fetch of the edge list per ``ttl_s`` seconds (per process)."""

    def __init__(self, ttl_s: float) -> None:
        self.ttl_s = ttl_s
        self._graph: JoinGraph | None = None
        self._loaded_at = 0.0

    def invalidate(self) -> None:
        self._graph = None

    async def get(self, conn: AsyncConnection) -> JoinGraph:
        if self._graph is None or time.monotonic() - self._loaded_at > self.ttl_s:
            cur = await conn.execute(_SQL)
            edges = [JoinEdge(r[0], table_id(r[1]), table_id(r[2]), r[3], r[4], r[5]) for r in await cur.fetchall()]
            self._graph = JoinGraph(edges)
            self._loaded_at = time.monotonic()
        return self._graph
