"""Load the Chinook digital music store into PostgreSQL (schema ``chinook`` by default).

The rows come from the Django fixture vendored in ``data/chinook_fixture.json.gz`` (see
``data/README.md``). ``load(url, schema)`` drops and recreates the schema, creates snake_case tables,
bulk-loads them with COPY, then adds the foreign keys, indexes every foreign key, grants read access to
cubesage's read-only role (when it exists), runs ANALYZE and returns the row count of every table.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from cubesage_core.db import READER_ROLE, one

FIXTURE = Path(__file__).resolve().parent / "data" / "chinook_fixture.json.gz"

PK = "pk"  # the fixture's primary key, which is not among its "fields"


@dataclass(frozen=True)
class Column:
    """A column of a warehouse table and the fixture field it is read from."""

    name: str
    type: str
    source: str  # field name in the fixture, or PK
    nullable: bool = True


@dataclass(frozen=True)
class Table:
    """A warehouse table: its columns, keys and the fixture model (Django ``app.model``) holding its rows."""

    name: str
    fixture_model: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...]
    foreign_keys: tuple[tuple[str, str], ...] = ()  # (column, referenced table)


def _id(table: str) -> Column:
    """The surrogate key ``<table>_id``, read from the fixture record's ``pk``."""
    return Column(f"{table}_id", "integer", PK, nullable=False)


def _address(prefix: str = "") -> tuple[Column, ...]:
    """Address columns; the fixture spells them without underscores (``billing_city`` <- ``billingcity``)."""
    fields = ("address", "city", "state", "country", "postalcode")
    names = ("address", "city", "state", "country", "postal_code")
    return tuple(
        Column(f"{prefix}{name}", "text", f"{prefix.replace('_', '')}{field}")
        for name, field in zip(names, fields, strict=True)
    )


TABLES: tuple[Table, ...] = (
    Table("artist", "chinook.artist", (_id("artist"), Column("name", "text", "name")), ("artist_id",)),
    Table("genre", "chinook.genre", (_id("genre"), Column("name", "text", "name")), ("genre_id",)),
    Table("media_type", "chinook.mediatype", (_id("media_type"), Column("name", "text", "name")), ("media_type_id",)),
    Table("playlist", "chinook.playlist", (_id("playlist"), Column("name", "text", "name")), ("playlist_id",)),
    Table(
        "album",
        "chinook.album",
        (_id("album"), Column("title", "text", "title", False), Column("artist_id", "integer", "artist", False)),
        ("album_id",),
        (("artist_id", "artist"),),
    ),
    Table(
        "track",
        "chinook.track",
        (
            _id("track"),
            Column("name", "text", "name", False),
            Column("album_id", "integer", "album"),
            Column("media_type_id", "integer", "mediatype", False),
            Column("genre_id", "integer", "genre"),
            Column("composer", "text", "composer"),
            Column("milliseconds", "integer", "milliseconds", False),
            Column("bytes", "integer", "bytes"),
            Column("unit_price", "numeric(10,2)", "unit_price", False),
        ),
        ("track_id",),
        (("album_id", "album"), ("media_type_id", "media_type"), ("genre_id", "genre")),
    ),
    Table(
        "playlist_track",
        "chinook.playlisttrack",
        (Column("playlist_id", "integer", "playlist", False), Column("track_id", "integer", "track", False)),
        ("playlist_id", "track_id"),
        (("playlist_id", "playlist"), ("track_id", "track")),
    ),
    Table(
        "employee",
        "chinook.employee",
        (
            _id("employee"),
            Column("last_name", "text", "lastname", False),
            Column("first_name", "text", "firstname", False),
            Column("title", "text", "title"),
            Column("reports_to", "integer", "reports_to"),
            Column("birth_date", "date", "birthdate"),
            Column("hire_date", "date", "hiredate"),
            *_address(),
            Column("phone", "text", "phone"),
            Column("fax", "text", "fax"),
            Column("email", "text", "email"),
        ),
        ("employee_id",),
        (("reports_to", "employee"),),
    ),
    Table(
        "customer",
        "chinook.customer",
        (
            _id("customer"),
            Column("first_name", "text", "firstname", False),
            Column("last_name", "text", "lastname", False),
            Column("company", "text", "company"),
            *_address(),
            Column("phone", "text", "phone"),
            Column("fax", "text", "fax"),
            Column("email", "text", "email", False),
            Column("support_rep_id", "integer", "support_rep"),
        ),
        ("customer_id",),
        (("support_rep_id", "employee"),),
    ),
    Table(
        "invoice",
        "chinook.invoice",
        (
            _id("invoice"),
            Column("customer_id", "integer", "customer", False),
            Column("invoice_date", "timestamp", "invoicedate", False),
            *_address("billing_"),
            Column("total", "numeric(10,2)", "total", False),
        ),
        ("invoice_id",),
        (("customer_id", "customer"),),
    ),
    Table(
        "invoice_line",
        "chinook.invoiceline",
        (
            _id("invoice_line"),
            Column("invoice_id", "integer", "invoice", False),
            Column("track_id", "integer", "track", False),
            Column("unit_price", "numeric(10,2)", "unit_price", False),
            Column("quantity", "integer", "quantity", False),
        ),
        ("invoice_line_id",),
        (("invoice_id", "invoice"), ("track_id", "track")),
    ),
)

_CONVERT: dict[str, Callable[[Any], Any]] = {
    "timestamp": lambda v: dt.datetime.fromisoformat(v.removesuffix("Z")),
    "date": lambda v: dt.date.fromisoformat(v[:10]),
}


def read_fixture(path: Path = FIXTURE) -> dict[str, list[dict[str, Any]]]:
    """The fixture's records grouped by model, with ``pk`` merged into the fields (money as Decimal)."""
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        records = json.load(fh, parse_float=Decimal)
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        grouped[record["model"]].append({PK: record["pk"], **record["fields"]})
    return grouped


def table_rows(table: Table, records: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The rows of ``table`` in column order, sorted by primary key; values typed for COPY."""

    def value(record: dict[str, Any], column: Column) -> Any:
        raw = record.get(column.source)
        if raw is None:
            if not column.nullable:
                raise ValueError(f"{table.name}.{column.name}: missing value in fixture record {record[PK]}")
            return None
        return _CONVERT.get(column.type, lambda v: v)(raw)

    rows = [tuple(value(r, c) for c in table.columns) for r in records]
    keys = [i for i, c in enumerate(table.columns) if c.name in table.primary_key]
    return sorted(rows, key=lambda row: tuple(row[i] for i in keys))


def _create_table(cur: psycopg.Cursor, schema: str, table: Table) -> None:
    columns = [
        sql.SQL("{} {}{}").format(sql.Identifier(c.name), sql.SQL(c.type), sql.SQL("" if c.nullable else " NOT NULL"))
        for c in table.columns
    ]
    columns.append(sql.SQL("PRIMARY KEY ({})").format(sql.SQL(", ").join(map(sql.Identifier, table.primary_key))))
    cur.execute(
        sql.SQL("CREATE TABLE {}.{} ({})").format(
            sql.Identifier(schema), sql.Identifier(table.name), sql.SQL(", ").join(columns)
        )
    )


def _copy_rows(cur: psycopg.Cursor, schema: str, table: Table, rows: list[tuple[Any, ...]]) -> None:
    statement = sql.SQL("COPY {}.{} ({}) FROM STDIN").format(
        sql.Identifier(schema),
        sql.Identifier(table.name),
        sql.SQL(", ").join(sql.Identifier(c.name) for c in table.columns),
    )
    with cur.copy(statement) as copy:
        for row in rows:
            copy.write_row(row)


def _add_foreign_keys(cur: psycopg.Cursor, schema: str, table: Table) -> None:
    """Each foreign key references the primary key of its table and gets an index (the leading column of a
    composite primary key is indexed already)."""
    referenced = {t.name: t.primary_key[0] for t in TABLES}
    for column, target in table.foreign_keys:
        cur.execute(
            sql.SQL("ALTER TABLE {s}.{t} ADD CONSTRAINT {c} FOREIGN KEY ({col}) REFERENCES {s}.{r} ({rc})").format(
                s=sql.Identifier(schema),
                t=sql.Identifier(table.name),
                c=sql.Identifier(f"{table.name}_{column}_fkey"),
                col=sql.Identifier(column),
                r=sql.Identifier(target),
                rc=sql.Identifier(referenced[target]),
            )
        )
        if column != table.primary_key[0]:
            cur.execute(
                sql.SQL("CREATE INDEX {i} ON {s}.{t} ({col})").format(
                    i=sql.Identifier(f"{table.name}_{column}_idx"),
                    s=sql.Identifier(schema),
                    t=sql.Identifier(table.name),
                    col=sql.Identifier(column),
                )
            )


def _grant_reader(cur: psycopg.Cursor, schema: str) -> None:
    """cubesage runs warehouse queries as its read-only role; grant it this schema when the role exists."""
    if cur.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (READER_ROLE,)).fetchone() is None:
        return
    cur.execute(
        sql.SQL("GRANT USAGE ON SCHEMA {s} TO {r}; GRANT SELECT ON ALL TABLES IN SCHEMA {s} TO {r}").format(
            s=sql.Identifier(schema), r=sql.Identifier(READER_ROLE)
        )
    )


def load(url: str, schema: str = "chinook") -> dict[str, int]:
    """(Re)create ``schema`` at ``url`` with the Chinook tables and data; returns rows per table."""
    fixture = read_fixture()
    with psycopg.connect(url) as conn, conn.cursor() as cur:
        cur.execute(sql.SQL("DROP SCHEMA IF EXISTS {s} CASCADE; CREATE SCHEMA {s}").format(s=sql.Identifier(schema)))
        for table in TABLES:
            _create_table(cur, schema, table)
            _copy_rows(cur, schema, table, table_rows(table, fixture[table.fixture_model]))
        for table in TABLES:
            _add_foreign_keys(cur, schema, table)
        _grant_reader(cur, schema)
        counts = {
            t.name: one(
                cur.execute(
                    sql.SQL("SELECT count(*) FROM {}.{}").format(sql.Identifier(schema), sql.Identifier(t.name))
                ).fetchone()
            )[0]
            for t in TABLES
        }
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("ANALYZE {}").format(
                sql.SQL(", ").join(
                    sql.SQL("{}.{}").format(sql.Identifier(schema), sql.Identifier(t.name)) for t in TABLES
                )
            )
        )
    return counts
