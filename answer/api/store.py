"""What the API keeps in PostgreSQL: API key lookups, the audit log (semlayer.query_log), feedback, catalog.

``Store`` is the interface the controllers use; ``PostgresStore`` implements it on a checked
async psycopg pool (``cubesage_core.db.async_pool``). Unit tests substitute a small in-memory fake.
"""

from __future__ import annotations

import time
from typing import Any, Protocol, runtime_checkable
from uuid import UUID

import msgspec
import psycopg
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from answer.api.dto import CatalogCube, CatalogMember, CatalogResponse, CatalogTerm, QueryRecord
from answer.keys import KeyGrant, hash_token
from cubesage_core.db import aread, async_pool

AUDIT_TABLE_ROWS = 200  # rows of the answer table kept in the audit log


@runtime_checkable
class Store(Protocol):
    async def open(self) -> None: ...
    async def close(self) -> None: ...
    async def ping(self) -> None: ...
    async def key_for(self, token: str) -> KeyGrant | None: ...
    async def has_active_keys(self) -> bool: ...
    async def log_answer(self, answer: dict[str, Any], *, session_id: str | None, api_key_id: str | None) -> None: ...
    async def get_query(self, query_id: UUID) -> QueryRecord | None: ...
    async def set_feedback(self, query_id: UUID, feedback: dict[str, Any]) -> bool: ...
    async def catalog(self) -> CatalogResponse: ...


def audit_row(answer: dict[str, Any]) -> dict[str, Any]:
    """The query_log columns for one answer payload (table truncated, SQL pulled out of provenance)."""
    provenance = answer.get("provenance") or {}
    table = answer.get("table") or {}
    sql = provenance.get("sql") or provenance.get("executed_sql")
    if isinstance(sql, list):
        sql = ";\n".join(str(s) for s in sql)
    return {
        "query_id": str(answer["query_id"]),
        "question": answer.get("question") or "",
        "intent": answer.get("intent"),
        "plan": provenance,
        "timings": answer.get("timings_ms") or {},
        "executed_sql": sql,
        "answer": {
            "text": answer.get("text", ""),
            "table": {"columns": table.get("columns", []), "rows": (table.get("rows") or [])[:AUDIT_TABLE_ROWS]},
            "chart": answer.get("chart"),
        },
    }


async def _configure(conn: psycopg.AsyncConnection) -> None:
    """Audit rows are committed without waiting for the WAL flush: a crash may lose the last few log
    rows, never corrupt anything; the answer path does not wait on fsync."""
    await conn.execute("SET synchronous_commit TO off")


def _jsonb(value: Any) -> Jsonb:
    """A jsonb parameter encoded by msgspec (non-JSON values such as dates become strings)."""
    return Jsonb(value, dumps=_dumps)


def _dumps(value: Any) -> str:
    return msgspec.json.encode(value, enc_hook=str).decode()


class PostgresStore:
    """Store on the cubesage database through an async connection pool."""

    KEY_CACHE_S = 5.0  # a revoked key stops working within this many seconds

    def __init__(self, url: str, max_size: int = 8) -> None:
        self.url = url
        self.pool: AsyncConnectionPool = async_pool(
            url, min_size=2, max_size=max_size, name="api-store", configure=_configure
        )
        self._keys: dict[str, tuple[float, KeyGrant | None]] = {}

    async def open(self) -> None:
        await self.pool.open(wait=True, timeout=30)

    async def close(self) -> None:
        await self.pool.close()

    async def ping(self) -> None:
        async with self.pool.connection(timeout=5) as conn:
            await conn.execute("SELECT 1")

    async def key_for(self, token: str) -> KeyGrant | None:
        """The active key of ``token`` (cached a few seconds, valid or not); a read, plus an update of
        ``last_used_at`` at most once a minute per key: a flood of bad tokens writes nothing."""
        digest = hash_token(token)
        cached = self._keys.get(digest)
        if cached and time.monotonic() - cached[0] < self.KEY_CACHE_S:
            return cached[1]

        async def lookup(conn: psycopg.AsyncConnection) -> tuple | None:
            cur = await conn.execute(
                "SELECT key_id, scopes, last_used_at IS NULL OR last_used_at < now() - interval '1 minute' "
                "FROM semlayer.api_key WHERE token_sha256 = %s AND revoked_at IS NULL",
                (digest,),
            )
            row = await cur.fetchone()
            if row is not None and row[2]:
                await conn.execute("UPDATE semlayer.api_key SET last_used_at = now() WHERE key_id = %s", (row[0],))
            return row

        row = await aread(self.pool, lookup)
        grant = KeyGrant(row[0], frozenset(row[1])) if row else None
        if len(self._keys) > 10_000:
            self._keys.clear()
        self._keys[digest] = (time.monotonic(), grant)
        return grant

    async def _one(self, query: str, params: tuple[Any, ...] = ()) -> tuple | None:
        """The first row of an idempotent statement (retried once when the server dropped the connection)."""

        async def fetch(conn: psycopg.AsyncConnection) -> tuple | None:
            return await (await conn.execute(query, params)).fetchone()

        return await aread(self.pool, fetch)

    async def _all(self, query: str, params: tuple[Any, ...] = ()) -> list[tuple]:
        async def fetch(conn: psycopg.AsyncConnection) -> list[tuple]:
            return await (await conn.execute(query, params)).fetchall()

        return await aread(self.pool, fetch)

    async def has_active_keys(self) -> bool:
        row = await self._one("SELECT EXISTS (SELECT 1 FROM semlayer.api_key WHERE revoked_at IS NULL)")
        return bool(row and row[0])

    async def log_answer(self, answer: dict[str, Any], *, session_id: str | None, api_key_id: str | None) -> None:
        row = audit_row(answer)

        async def upsert(conn: psycopg.AsyncConnection) -> None:  # idempotent: safe to retry
            await conn.execute(
                """
                INSERT INTO semlayer.query_log
                    (query_id, session_id, api_key_id, question, intent, plan, timings, executed_sql, answer)
                VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
                ON CONFLICT (query_id) DO UPDATE SET
                    session_id = COALESCE(query_log.session_id, EXCLUDED.session_id),
                    api_key_id = COALESCE(query_log.api_key_id, EXCLUDED.api_key_id),
                    executed_sql = COALESCE(query_log.executed_sql, EXCLUDED.executed_sql)
                """,
                (
                    row["query_id"],
                    session_id,
                    api_key_id,
                    row["question"],
                    row["intent"],
                    _jsonb(row["plan"]),
                    _jsonb(row["timings"]),
                    row["executed_sql"],
                    _jsonb(row["answer"]),
                ),
            )

        await aread(self.pool, upsert)

    async def get_query(self, query_id: UUID) -> QueryRecord | None:
        row = await self._one(
            "SELECT query_id, created_at, question, session_id, intent, plan, timings, executed_sql, "
            "answer, feedback FROM semlayer.query_log WHERE query_id = %s",
            (query_id,),
        )
        if row is None:
            return None
        return QueryRecord(
            query_id=str(row[0]),
            created_at=row[1].isoformat(),
            question=row[2],
            session_id=row[3],
            intent=row[4],
            plan=row[5] or {},
            timings=row[6] or {},
            executed_sql=row[7],
            answer=row[8] or {},
            feedback=row[9],
        )

    async def set_feedback(self, query_id: UUID, feedback: dict[str, Any]) -> bool:
        return (
            await self._one(
                "UPDATE semlayer.query_log SET feedback = %s WHERE query_id = %s RETURNING query_id",
                (_jsonb(feedback), query_id),
            )
            is not None
        )

    async def catalog(self) -> CatalogResponse:
        members = await self._all(
            "SELECT a.asset_type, a.name, a.title, a.description, p.name, COALESCE(a.meta->>'type', "
            "a.meta->>'agg'), a.meta->>'format' FROM semlayer.asset a "
            "LEFT JOIN semlayer.asset p ON p.asset_id = a.parent_id "
            "WHERE a.asset_type IN ('metric', 'dimension') AND COALESCE(a.meta->>'public', 'true') <> 'false' "
            "ORDER BY a.asset_type, a.name"
        )
        cubes = await self._all(
            "SELECT name, title, description FROM semlayer.asset WHERE asset_type = 'table' "
            "AND meta->>'source' = 'cube_models' ORDER BY name"
        )
        terms = await self._all(
            "SELECT canonical_term, synonyms, language, definition, mapped_asset_id "
            "FROM semlayer.business_term ORDER BY canonical_term"
        )
        metrics: list[CatalogMember] = []
        dimensions: list[CatalogMember] = []
        for kind, name, title, description, cube, typ, fmt in members:
            member = CatalogMember(
                name=name, title=title or "", description=description or "", cube=cube, type=typ, format=fmt
            )
            (metrics if kind == "metric" else dimensions).append(member)
        return CatalogResponse(
            metrics=metrics,
            dimensions=dimensions,
            terms=[
                CatalogTerm(term=t, synonyms=list(s or []), language=lang or "", definition=d or "", maps_to=m)
                for t, s, lang, d, m in terms
            ],
            cubes=[CatalogCube(name=n, title=t or "", description=d or "") for n, t, d in cubes],
        )
