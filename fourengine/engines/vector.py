"""Engine V: pgvector cosine search over ``semlayer.asset_embedding`` (HNSW), one SQL round trip.

Returns the ``top_k`` nearest assets of the wanted types with their cosine
similarity; callers apply the threshold (the best score below it still feeds
the CRAG grade). When every asset type is wanted and no scope is set, the
nearest-neighbour subquery reads the HNSW index directly; a type or namespace
filter makes PostgreSQL choose between the index and an exact scan.
"""

from __future__ import annotations

import numpy as np
from psycopg import AsyncConnection

from fourengine.engines._rows import ASSET_COLUMNS, asset_from
from fourengine.models import VectorHit

ALL_TYPES = frozenset({"table", "column", "metric", "dimension", "segment", "join", "term", "business_rule"})

_OUTER = f"""
SELECT {ASSET_COLUMNS}, 1 - n.distance AS score
FROM ({{inner}}) n
JOIN semlayer.asset a USING (asset_id)
ORDER BY n.distance
"""
_INDEXED = _OUTER.format(
    inner="""
    SELECT e.asset_id, e.embedding <=> %(q)s AS distance
    FROM semlayer.asset_embedding e
    ORDER BY e.embedding <=> %(q)s
    LIMIT %(k)s"""
)
_FILTERED = _OUTER.format(
    inner="""
    SELECT e.asset_id, e.embedding <=> %(q)s AS distance
    FROM semlayer.asset_embedding e
    JOIN semlayer.asset a USING (asset_id)
    WHERE a.asset_type = ANY(%(types)s) AND (%(scope)s::text IS NULL OR a.meta->>'namespace' = %(scope)s)
    ORDER BY e.embedding <=> %(q)s
    LIMIT %(k)s"""
)


async def search_assets(
    conn: AsyncConnection,
    embedding: np.ndarray,
    *,
    top_k: int,
    types: tuple[str, ...],
    scope: str | None = None,
) -> list[VectorHit]:
    """The ``top_k`` assets nearest to ``embedding`` (cosine), best first."""
    sql = _INDEXED if scope is None and set(types) >= ALL_TYPES else _FILTERED
    cur = await conn.execute(sql, {"q": embedding, "types": list(types), "scope": scope, "k": top_k})
    return [VectorHit(asset_from(row), float(row[8])) for row in await cur.fetchall()]
