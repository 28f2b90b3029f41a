"""Rollup tables: cubesage builds each ``rollup`` pre-aggregation of the model as a PostgreSQL table in
schema ``cubesage_rollups`` and refreshes it when the warehouse changes.

A rollup is *fresh* when its table was built from the model's current rollup SQL and the warehouse's
refresh key (``cubesage_core.refresh_key``: file nodes and write counters of the warehouse schemas) is the
one read before the build. Only fresh rollups answer queries, so a changed warehouse is answered from its
tables until the refresh has run: never from stale numbers. Tables are built under the API's role (which
owns the schema, so the API can refresh them too) and read by the reader role.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from cube_models.compiler import compile_rollup
from cube_models.model import PreAggregation, SemanticModel
from cubesage_core.db import API_ROLE, READER_ROLE, one
from cubesage_core.refresh_key import Schemas, fingerprint

SCHEMA = "cubesage_rollups"
_REGISTRY = sql.SQL("""CREATE TABLE IF NOT EXISTS cubesage_rollups.registry (
    rollup      text PRIMARY KEY,
    table_name  text NOT NULL,
    sql_hash    text NOT NULL,
    refresh_key text NOT NULL,
    row_count   bigint NOT NULL,
    seconds     double precision NOT NULL,
    built_at    timestamptz NOT NULL DEFAULT now())""")
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RollupBuild:
    rollup: str
    table: str
    rows: int
    seconds: float
    built: bool  # False: it was fresh already

    def as_dict(self) -> dict[str, Any]:
        return {
            "rollup": self.rollup,
            "table": self.table,
            "rows": self.rows,
            "seconds": round(self.seconds, 2),
            "built": self.built,
        }


def _sql_hash(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:10]


def table_name(pre: PreAggregation, build_sql: str) -> str:
    return f"{pre.cube}__{pre.name}_{_sql_hash(build_sql)}".lower()[:63]


def _key(conn: psycopg.Connection, schemas: Schemas) -> str:
    return json.dumps(list(fingerprint(conn, schemas)))


def _as_api_role(conn: psycopg.Connection) -> None:
    """Build as the API's role, the schema's owner (a superuser's connection switches to it)."""
    user = conn.execute("SELECT current_user").fetchone()
    if user is not None and user[0] != API_ROLE:
        conn.execute(sql.SQL("SET LOCAL ROLE {}").format(sql.Identifier(API_ROLE)))


def registry(conn: psycopg.Connection) -> dict[str, tuple[str, str, str]]:
    """rollup path -> (table, sql hash, refresh key) of the rollups built so far."""
    if one(conn.execute("SELECT to_regclass('cubesage_rollups.registry')").fetchone())[0] is None:
        return {}
    with psycopg.Cursor(conn) as cur:
        rows = cur.execute("SELECT rollup, table_name, sql_hash, refresh_key FROM cubesage_rollups.registry")
        return {r[0]: (r[1], r[2], r[3]) for r in rows.fetchall()}


def fresh_tables(
    conn: psycopg.Connection, model: SemanticModel, schemas: Schemas, key: tuple[Any, ...] | None = None
) -> dict[str, str]:
    """rollup path -> qualified table, for the rollups that are fresh now (``key``: the fingerprint just read)."""
    pres = model.pre_aggregations()
    if not pres:
        return {}
    built = registry(conn)
    current = json.dumps(list(key)) if key is not None else _key(conn, schemas)
    out = {}
    for pre in pres:
        entry = built.get(pre.path)
        if entry and entry[2] == current and entry[1] == _sql_hash(compile_rollup(pre, model)):
            out[pre.path] = f"{SCHEMA}.{entry[0]}"
    return out


def refresh(
    url: str, model: SemanticModel, schemas: Schemas, *, force: bool = False, only: Sequence[str] | None = None
) -> list[RollupBuild]:
    """Build every rollup that is not fresh (all of them with ``force``); drops tables no rollup uses."""
    out: list[RollupBuild] = []
    with psycopg.connect(url, autocommit=True) as conn:
        with conn.transaction():
            _as_api_role(conn)
            conn.execute(_REGISTRY)
        for pre in model.pre_aggregations():
            if only is not None and pre.path not in only:
                continue
            out.append(_build(conn, pre, model, schemas, force))
        _drop_unused(conn, model)
    return out


def _build(
    conn: psycopg.Connection, pre: PreAggregation, model: SemanticModel, schemas: Schemas, force: bool
) -> RollupBuild:
    started = time.monotonic()
    build_sql = compile_rollup(pre, model)
    name, digest = table_name(pre, build_sql), _sql_hash(build_sql)
    key = _key(conn, schemas)
    entry = registry(conn).get(pre.path)
    if not force and entry == (name, digest, key):
        return RollupBuild(pre.path, f"{SCHEMA}.{name}", -1, 0.0, False)
    staging = f"{name}__new"[:63]
    with conn.transaction():
        _as_api_role(conn)
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(SCHEMA, staging)))
        conn.execute(sql.SQL("CREATE TABLE {} AS ").format(sql.Identifier(SCHEMA, staging)) + sql.SQL(build_sql))
        rows = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(SCHEMA, staging))).fetchone()
        if entry is not None:
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(SCHEMA, entry[0])))
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(SCHEMA, name)))
        conn.execute(
            sql.SQL("ALTER TABLE {} RENAME TO {}").format(sql.Identifier(SCHEMA, staging), sql.Identifier(name))
        )
        conn.execute(
            sql.SQL("GRANT SELECT ON {} TO {}").format(sql.Identifier(SCHEMA, name), sql.Identifier(READER_ROLE))
        )
        seconds = time.monotonic() - started
        conn.execute(
            "INSERT INTO cubesage_rollups.registry (rollup, table_name, sql_hash, refresh_key, row_count, seconds) "
            "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (rollup) DO UPDATE SET table_name = EXCLUDED.table_name, "
            "sql_hash = EXCLUDED.sql_hash, refresh_key = EXCLUDED.refresh_key, row_count = EXCLUDED.row_count, "
            "seconds = EXCLUDED.seconds, built_at = now()",
            (pre.path, name, digest, key, int(rows[0] if rows else 0), seconds),
        )
    conn.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(SCHEMA, name)))
    return RollupBuild(pre.path, f"{SCHEMA}.{name}", int(rows[0] if rows else 0), time.monotonic() - started, True)


def _drop_unused(conn: psycopg.Connection, model: SemanticModel) -> None:
    """Tables and registry rows of rollups the model no longer has (renamed, removed or redefined)."""
    keep = {pre.path for pre in model.pre_aggregations()}
    with conn.transaction():
        _as_api_role(conn)
        for path, (table, _, _) in registry(conn).items():
            if path not in keep:
                conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(SCHEMA, table)))
                conn.execute("DELETE FROM cubesage_rollups.registry WHERE rollup = %s", (path,))


class Refresher:
    """Refreshes stale rollups in one background thread at a time (the built-in backend starts it when a
    query finds the warehouse changed); failures are logged, and queries keep using the warehouse."""

    def __init__(self, url: str, model: SemanticModel, schemas: Schemas) -> None:
        self.url, self.model, self.schemas = url, model, schemas
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def start(self) -> bool:
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return False
            self._thread = threading.Thread(target=self._run, name="rollup-refresh", daemon=True)
            self._thread.start()
            return True

    def join(self, timeout: float | None = None) -> None:
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _run(self) -> None:
        try:
            refresh(self.url, self.model, self.schemas)
        except psycopg.Error as err:
            log.warning("rollup refresh failed: %s", err)
