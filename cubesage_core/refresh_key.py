"""Refresh keys: a cheap fingerprint of one schema's tables, the way Cube decides a cache is stale.

The fingerprint is the tables' file nodes (they change on TRUNCATE and DROP + CREATE) and their
insert / update / delete counters from ``pg_stat_user_tables``. A :class:`RefreshKey` reads it at most
once every ``every_s`` seconds, so a cache that checks it is at most that far (plus PostgreSQL's
statistics flush, about a second) behind writes made by any process.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import psycopg

FINGERPRINT_SQL = (
    "SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)::bigint,"
    " coalesce(sum(pg_relation_filenode(relid)::bigint), 0)::bigint, count(*)"
    " FROM pg_stat_user_tables WHERE schemaname = ANY(%s)"
)


Schemas = str | tuple[str, ...]


def _names(schema: Schemas) -> list[str]:
    return [schema] if isinstance(schema, str) else list(schema)


def fingerprint(conn: psycopg.Connection, schema: Schemas) -> tuple[Any, ...]:
    """The current fingerprint of ``schema`` (one name or several; works whatever cursor factory ``conn`` uses)."""
    with psycopg.Cursor(conn) as cur:
        return tuple(cur.execute(FINGERPRINT_SQL, (_names(schema),)).fetchone() or ())


async def afingerprint(conn: psycopg.AsyncConnection, schema: Schemas) -> tuple[Any, ...]:
    async with psycopg.AsyncCursor(conn) as cur:
        return tuple(await (await cur.execute(FINGERPRINT_SQL, (_names(schema),))).fetchone() or ())


class RefreshKey:
    """The last fingerprint of ``schema`` and when it was read. Not thread-safe: callers hold a lock."""

    def __init__(self, schema: Schemas, every_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.schema, self.every_s = schema, every_s
        self._clock = clock
        self.value: tuple[Any, ...] | None = None
        self._read_at = float("-inf")

    def due(self) -> bool:
        return self._clock() - self._read_at >= self.every_s

    def update(self, value: tuple[Any, ...]) -> bool:
        """Record a fingerprint just read; True when it differs from the previous one."""
        changed = value != self.value
        self.value, self._read_at = value, self._clock()
        return changed

    def expire(self) -> None:
        """Make the next check read the fingerprint again."""
        self._read_at = float("-inf")
