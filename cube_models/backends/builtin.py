"""The built-in backend: compile with ``cube_models.compiler`` and run on the warehouse (psycopg).

Each query runs in a READ ONLY transaction with ``SET LOCAL statement_timeout``, ``SET LOCAL ROLE
cubesage_reader`` and UTC time zone; user values travel as bind parameters (``$n``, raw cursor).
Results are kept in a :class:`~cube_models.result_cache.ResultCache` while the warehouse's refresh
key is unchanged (``settings.warehouse_cache_refresh_s``; 0 turns it off). Queries a fresh rollup table can
answer (``cube_models.rollups``) read it instead of the warehouse; the backend checks which rollups are
fresh as often as the result cache checks the warehouse (every ``ROLLUP_CHECK_S`` seconds when that cache
is off) and refreshes stale ones in a background thread (``settings.rollup_refresh``).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from datetime import date
from typing import Any

import psycopg
from psycopg import sql as pgsql
from psycopg_pool import ConnectionPool

from cube_models import rollups
from cube_models.backends.base import LoadResult, QueryInput, SemanticBackend
from cube_models.compiler import Compiled, compile_query
from cube_models.errors import QueryError
from cube_models.model import SemanticModel
from cube_models.query import CubeQuery
from cube_models.result_cache import ResultCache
from cubesage_core import db
from cubesage_core.db import READER_ROLE
from cubesage_core.lru import Lru
from cubesage_core.refresh_key import RefreshKey, afingerprint, fingerprint
from cubesage_core.settings import Settings, get_settings

POOL_SIZE = 8
ROLLUP_CHECK_S = 10.0
COMPILED_ENTRIES = 1024  # compiled queries kept per backend (the model is fixed for its lifetime)


@contextmanager
def _warehouse_errors(timeout_ms: int) -> Iterator[None]:
    """Database errors of a compiled query as ``QueryError``s (connection failures pass through)."""
    try:
        yield
    except psycopg.errors.QueryCanceled as exc:
        raise QueryError(f"query cancelled after {timeout_ms} ms (statement_timeout)") from exc
    except psycopg.errors.DataError as exc:
        raise QueryError(f"bad value in the query: {exc.diag.message_primary}") from exc
    except psycopg.OperationalError:
        raise
    except psycopg.DatabaseError as exc:
        raise QueryError(f"the warehouse rejected the compiled SQL: {exc.diag.message_primary}") from exc


WORK_MEM = "32MB"  # aggregates over a few hundred thousand rows sort in memory, not on disk


def _prelude(timeout_ms: int) -> pgsql.Composed:
    """One round trip: read-only transaction, statement timeout, sort memory, reader role, UTC."""
    return pgsql.SQL("; ").join(
        [
            pgsql.SQL("SET TRANSACTION READ ONLY"),
            pgsql.SQL("SET LOCAL statement_timeout = {}").format(pgsql.Literal(int(timeout_ms))),
            pgsql.SQL("SET LOCAL work_mem = {}").format(pgsql.Literal(WORK_MEM)),
            pgsql.SQL("SET LOCAL ROLE {}").format(pgsql.Identifier(READER_ROLE)),
            pgsql.SQL("SET LOCAL TIME ZONE 'UTC'"),
        ]
    )


def _cache_key(compiled: Compiled) -> Hashable | None:
    key = (compiled.sql, tuple(compiled.params), compiled.total_sql)
    try:
        hash(key)
    except TypeError:  # a list-valued parameter: run it, do not cache it
        return None
    return key


class BuiltinBackend(SemanticBackend):
    name = "builtin"

    def __init__(self, url: str, model: SemanticModel, settings: Settings | None = None) -> None:
        self.url, self.model = url, model
        self.settings = settings or get_settings()
        self._pool: ConnectionPool | None = None
        self._lock = threading.Lock()
        self.cache = ResultCache(tuple(self.settings.warehouse_schemas), self.settings.warehouse_cache_refresh_s)
        self._compiled: Lru[Compiled] = Lru(COMPILED_ENTRIES)
        schemas = tuple(self.settings.warehouse_schemas)
        self._rollup_key = RefreshKey(schemas, self.settings.warehouse_cache_refresh_s or ROLLUP_CHECK_S)
        self.rollup_tables: dict[str, str] = {}
        self.refresher = rollups.Refresher(url, model, schemas) if model.pre_aggregations() else None

    def check_rollups(self, conn: psycopg.Connection, force: bool = False) -> None:
        """Which rollups are fresh (when due); a stale one starts a background refresh."""
        if self.refresher is None or not (force or self._rollup_key.due()):
            return
        key = fingerprint(conn, self._rollup_key.schema)
        self._rollup_key.update(key)
        fresh = rollups.fresh_tables(conn, self.model, self._rollup_key.schema, key)
        self.rollup_tables = fresh
        if len(fresh) < len(self.model.pre_aggregations()) and self.settings.rollup_refresh:
            self.refresher.start()

    def compile(self, query: QueryInput, today: date | None = None) -> Compiled:
        """The compiled query, memoised by (query, today, fresh rollups) when ``today`` anchors the relative
        dates."""
        parsed = CubeQuery.parse(query)
        today = today or self.settings.today
        tables = dict(self.rollup_tables)
        key = (
            (json.dumps(parsed.to_dict(), sort_keys=True), today, tuple(sorted(tables.items())))
            if today is not None
            else None
        )
        compiled = self._compiled.get(key) if key is not None else None
        if compiled is None:
            compiled = compile_query(
                parsed,
                self.model,
                today=today,
                default_limit=self.settings.default_limit,
                row_cap=self.settings.query_row_cap,
                rollups=tables,
            )
            if key is not None:
                self._compiled.put(key, compiled)
        return compiled

    def sql(self, query: QueryInput, today: date | None = None) -> str:
        return self.compile(query, today).sql

    def _connections(self) -> ConnectionPool:
        """A small pool (opened on first use): concurrent callers do not queue behind one connection."""
        with self._lock:
            if self._pool is None:
                self._pool = db.pool(
                    self.url,
                    min_size=1,
                    max_size=POOL_SIZE,
                    name="builtin-backend",
                    vector=False,
                    kwargs={"cursor_factory": psycopg.RawCursor},
                )
            return self._pool

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None

    def _result(
        self,
        compiled: Compiled,
        records: list[tuple[Any, ...]],
        total: int | None,
        started: float,
        *,
        cached: bool = False,
    ) -> LoadResult:
        return LoadResult(
            rows=compiled.rows(records),
            sql=compiled.sql,
            backend=self.name,
            total=total,
            annotation=compiled.annotation,
            elapsed_ms=(time.perf_counter() - started) * 1000,
            params=list(compiled.params),
            cached=cached,
            rollup=compiled.rollup,
        )

    def load(self, query: QueryInput, today: date | None = None) -> LoadResult:
        """Run the compiled query (read-only: retried once on a fresh connection when the server dropped the
        first mid-query)."""
        started = time.perf_counter()
        parsed = CubeQuery.parse(query)
        self.compile(parsed, today)  # a malformed query fails before any connection is taken
        with _warehouse_errors(self.settings.statement_timeout_ms):
            return db.read(self._connections(), lambda conn: self._load_on(conn, parsed, today, started))

    def _load_on(self, conn: psycopg.Connection, query: CubeQuery, today: date | None, started: float) -> LoadResult:
        self.check_rollups(conn)
        compiled = self.compile(query, today)
        key = _cache_key(compiled)
        if self.cache.due():
            self.cache.refresh(fingerprint(conn, self.cache.key.schema))
        hit = self.cache.get(key) if key is not None else None
        if hit is not None:
            return self._result(compiled, hit.records, hit.total, started, cached=True)
        version = self.cache.version
        with conn.transaction(), conn.cursor() as cur:
            cur.execute(_prelude(self.settings.statement_timeout_ms).as_string(conn))
            records = cur.execute(compiled.sql, compiled.params).fetchall()
            total = None
            if compiled.total_sql:
                total = int(db.one(cur.execute(compiled.total_sql, compiled.params).fetchone())[0])
        if key is not None:
            self.cache.put(key, records, total, version)
        return self._result(compiled, records, total, started)

    async def aload(self, query: QueryInput, today: date | None = None) -> LoadResult:
        started = time.perf_counter()
        if self.refresher is not None and self._rollup_key.due():
            await asyncio.to_thread(db.read, self._connections(), self.check_rollups)
        compiled = self.compile(query, today)
        key = _cache_key(compiled)
        with _warehouse_errors(self.settings.statement_timeout_ms):
            async with await psycopg.AsyncConnection.connect(self.url, cursor_factory=psycopg.AsyncRawCursor) as conn:
                if self.cache.due():
                    self.cache.refresh(await afingerprint(conn, self.cache.key.schema))
                hit = self.cache.get(key) if key is not None else None
                if hit is not None:
                    return self._result(compiled, hit.records, hit.total, started, cached=True)
                version = self.cache.version
                async with conn.transaction(), conn.cursor() as cur:
                    await cur.execute(_prelude(self.settings.statement_timeout_ms).as_string(conn))
                    records = await (await cur.execute(compiled.sql, compiled.params)).fetchall()
                    total = None
                    if compiled.total_sql:
                        row = await (await cur.execute(compiled.total_sql, compiled.params)).fetchone()
                        total = int(db.one(row)[0])
        if key is not None:
            self.cache.put(key, records, total, version)
        return self._result(compiled, records, total, started)
