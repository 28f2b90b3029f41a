"""The names of entity rows (customers, products, places: rows with a label) as an index in PostgreSQL.

``sag.entity_name`` holds one row per surface form: a row's label and other name columns, or its whole name
when the model writes it over columns ("first last", then also shown as the row's label; kind 0), the
first words of its label and its suffixed forms ("浙江" + "省", kind 1), each lower-cased with the row's
key. It is filled server-side (``INSERT ... SELECT`` from the warehouse table: no row crosses the wire)
and rebuilt only when the table changed (file node and write counters in ``sag.entity_name_source``).
At most :data:`NAME_CAP` rows per table are named (the first by key); a question's candidate surfaces are
looked up at once through the btree on ``surface``.

A surface several rows share resolves to one: full names before prefixes and suffixed forms, then the
later table of the catalog for full names (the earlier for the others), then the larger key for full names
(the smaller for the others), as the in-memory directory this replaces did.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import psycopg
from psycopg import sql

from cubesage_core.db import one

NAME_CAP = 2_000_000  # rows per entity table whose names are indexed (the first by key)
SURFACES = 2  # the version of ``_surfaces``: a table named by an older one is named again


class NameSource(Protocol):
    """An entity table (``router.detail.schema.TableSpec`` is one)."""

    @property
    def table(self) -> str: ...
    @property
    def schema(self) -> str: ...
    @property
    def key(self) -> str: ...
    @property
    def label(self) -> str | None: ...
    @property
    def name_columns(self) -> tuple[str, ...]: ...
    @property
    def prefix_words(self) -> int: ...
    @property
    def suffixes(self) -> tuple[tuple[str, str], ...]: ...
    @property
    def entity_type(self) -> str: ...
    @property
    def name_parts(self) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class NamedRow:
    """One row a surface names."""

    table: str
    key_column: str
    key_value: Any
    label: str
    entity_type: str


def _source_id(spec: NameSource) -> str:
    return f"{spec.schema}.{spec.table}"


def _definition(spec: NameSource, position: int) -> str:
    return json.dumps(
        [
            spec.key,
            spec.label,
            list(spec.name_columns),
            spec.prefix_words,
            [list(s) for s in spec.suffixes],
            spec.entity_type,
            list(spec.name_parts),
            position,
            NAME_CAP,
            SURFACES,
        ]
    )


def _state(conn: psycopg.Connection, spec: NameSource, position: int) -> str:
    row = conn.execute(
        "SELECT pg_relation_filenode(c.oid), coalesce(s.n_tup_ins + s.n_tup_upd + s.n_tup_del, 0) "
        "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid WHERE n.nspname = %s AND c.relname = %s",
        (spec.schema, spec.table),
    ).fetchone()
    return hashlib.sha1(repr((row, _definition(spec, position))).encode()).hexdigest()[:16]


def _whole_name(spec: NameSource) -> sql.Composable:
    """What names a row in answers: its name over columns joined by spaces ("Helena Holý"), else its label."""
    if spec.name_parts:
        return sql.SQL("concat_ws(' ', {})").format(
            sql.SQL(", ").join(sql.SQL("{}::text").format(sql.Identifier(c)) for c in spec.name_parts)
        )
    return sql.SQL("{}::text").format(sql.Identifier(str(spec.label)))


def _surfaces(spec: NameSource) -> list[tuple[sql.Composable, int]]:
    label = sql.Identifier(str(spec.label))
    columns = dict.fromkeys([str(spec.label), *spec.name_columns])
    if spec.name_parts:  # a part alone ("Mike", "By") names no row: many share it, and some are words
        columns = {c: None for c in columns if c not in spec.name_parts}
    out: list[tuple[sql.Composable, int]] = [(sql.SQL("{}::text").format(sql.Identifier(c)), 0) for c in columns]
    if spec.name_parts:
        out.append((_whole_name(spec), 0))
    if spec.prefix_words:
        out.append(
            (
                sql.SQL("array_to_string((regexp_split_to_array(btrim({}::text), '\\s+'))[1:{}], ' ')").format(
                    label, sql.Literal(spec.prefix_words)
                ),
                1,
            )
        )
    out += [
        (sql.SQL("{}::text || {}").format(sql.Identifier(c), sql.Literal(suffix)), 1) for c, suffix in spec.suffixes
    ]
    return out


def _fill(conn: psycopg.Connection, spec: NameSource, position: int) -> int:
    source = _source_id(spec)
    values = sql.SQL(", ").join(sql.SQL("({}, {})").format(expr, sql.Literal(kind)) for expr, kind in _surfaces(spec))
    query = sql.SQL(
        "INSERT INTO sag.entity_name (source, surface, kind, key_value, label) "
        "SELECT {src}, lower(s.surface), s.kind, to_jsonb(t.{key}), {whole} "
        "FROM (SELECT * FROM {table} ORDER BY {key} LIMIT {cap}) t "
        "CROSS JOIN LATERAL (VALUES {values}) AS s(surface, kind) "
        "WHERE t.{label} IS NOT NULL AND s.surface IS NOT NULL AND s.surface <> ''"
    ).format(
        src=sql.Literal(source),
        key=sql.Identifier(spec.key),
        whole=_whole_name(spec),
        label=sql.Identifier(str(spec.label)),
        table=sql.Identifier(spec.schema, spec.table),
        cap=sql.Literal(NAME_CAP),
        values=values,
    )
    conn.execute("DELETE FROM sag.entity_name WHERE source = %s", (source,))
    return conn.execute(query).rowcount


def refresh(conn: psycopg.Connection, specs: Sequence[NameSource]) -> dict[str, int | None]:
    """Rebuild the names of the entity tables that changed (others are kept: None); forget tables gone."""
    out: dict[str, int | None] = {}
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(4245)")  # one builder at a time
        for position, spec in enumerate(specs):
            if not spec.label:
                continue
            state = _state(conn, spec, position)
            source = _source_id(spec)
            known = conn.execute("SELECT state FROM sag.entity_name_source WHERE source = %s", (source,)).fetchone()
            if known is not None and known[0] == state:
                out[source] = None
                continue
            out[source] = _fill(conn, spec, position)
            conn.execute(
                "INSERT INTO sag.entity_name_source (source, position, table_name, key_column, entity_type, state) "
                "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (source) DO UPDATE SET position = EXCLUDED.position, "
                "table_name = EXCLUDED.table_name, key_column = EXCLUDED.key_column, "
                "entity_type = EXCLUDED.entity_type, state = EXCLUDED.state, built_at = now()",
                (source, position, spec.table, spec.key, spec.entity_type, state),
            )
        keep = [_source_id(s) for s in specs if s.label]
        conn.execute("DELETE FROM sag.entity_name WHERE NOT (source = ANY(%s))", (keep,))
        conn.execute("DELETE FROM sag.entity_name_source WHERE NOT (source = ANY(%s))", (keep,))
    return out


def longest(conn: psycopg.Connection) -> int:
    """The longest surface (candidate substrings of a question never need to be longer)."""
    return int(one(conn.execute("SELECT coalesce(max(length(surface)), 0) FROM sag.entity_name").fetchone())[0])


_LOOKUP = """
SELECT DISTINCT ON (n.surface) n.surface, s.table_name, s.key_column, n.key_value, n.label, s.entity_type
FROM sag.entity_name n JOIN sag.entity_name_source s USING (source)
WHERE n.surface = ANY(%s)
ORDER BY n.surface, n.kind,
         CASE WHEN n.kind = 0 THEN -s.position ELSE s.position END,
         CASE WHEN n.kind = 0 THEN n.key_value END DESC, n.key_value
"""


def lookup(conn: psycopg.Connection, surfaces: Sequence[str]) -> dict[str, NamedRow]:
    """The row each of ``surfaces`` (lower-cased) names, for those that name one."""
    if not surfaces:
        return {}
    rows = conn.execute(_LOOKUP, (list(surfaces),)).fetchall()
    return {r[0]: NamedRow(r[1], r[2], r[3], r[4], r[5]) for r in rows}
