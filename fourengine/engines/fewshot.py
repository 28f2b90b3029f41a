"""Engine D: nearest approved question -> Cube query / SQL pairs from ``dynamic_few_shot_cache``
(the cache itself is written by ``fourengine.fewshot_cache``).

One round trip: the nearest approved examples come back with their similarity;
those at or above the cache threshold are cache hits and their ``hits`` counter
is incremented in the same statement.
"""

from __future__ import annotations

import numpy as np
from psycopg import AsyncConnection

from fourengine.fewshot_cache import add_example as add_example_sync
from fourengine.models import FewShot

__all__ = ["add_example_sync", "similar_examples"]  # add_example_sync: the cache writer, for callers of engine D

_SQL = """
WITH near AS (
    SELECT id, 1 - (embedding <=> %(q)s) AS similarity
    FROM semlayer.dynamic_few_shot_cache
    WHERE approved
    ORDER BY embedding <=> %(q)s
    LIMIT %(k)s
), counted AS (
    UPDATE semlayer.dynamic_few_shot_cache c SET hits = c.hits + 1
    FROM near WHERE c.id = near.id AND near.similarity >= %(hit)s
    RETURNING c.id
)
SELECT c.id, c.question, c.cube_query, c.sql, near.similarity, near.similarity >= %(hit)s
FROM near JOIN semlayer.dynamic_few_shot_cache c USING (id)
WHERE near.similarity >= %(floor)s
ORDER BY near.similarity DESC
"""


async def similar_examples(
    conn: AsyncConnection,
    embedding: np.ndarray,
    *,
    hit_threshold: float,
    floor: float,
    limit: int,
) -> list[FewShot]:
    """Approved examples with similarity >= ``floor`` (best first); ``cache_hit`` when >= ``hit_threshold``."""
    cur = await conn.execute(_SQL, {"q": embedding, "k": limit, "hit": hit_threshold, "floor": floor})
    return [
        FewShot(id=int(r[0]), question=r[1], cube_query=r[2], sql=r[3], similarity=float(r[4]), cache_hit=bool(r[5]))
        for r in await cur.fetchall()
    ]
