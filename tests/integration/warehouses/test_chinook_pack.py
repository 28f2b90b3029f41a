"""The Chinook warehouse pack on a real PostgreSQL: the loader, the Cube model run by the built-in
compiler (every measure once), and a few measures checked against hand-written SQL."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import psycopg
import pytest
import yaml

from cube_models.backends import BuiltinBackend
from cube_models.model import SemanticModel, load_model
from cube_models.validate import validate
from cubesage_core.db import READER_ROLE
from cubesage_core.embedded_pg import EmbeddedPostgres
from cubesage_core.settings import Settings
from warehouses.packs import get_pack

pytestmark = pytest.mark.integration

PACK = get_pack("chinook")
DATABASE = "chinook"
EXPECTED_ROWS = {
    "artist": 275,
    "genre": 25,
    "media_type": 5,
    "playlist": 18,
    "album": 347,
    "track": 3503,
    "playlist_track": 8715,
    "employee": 8,
    "customer": 59,
    "invoice": 412,
    "invoice_line": 2240,
}
MEASURES = sorted(m.path for c in load_model(PACK.model_dir).cubes.values() for m in c.measures.values())


@pytest.fixture(scope="module")
def chinook_url(pg_server: EmbeddedPostgres) -> str:
    """A fresh database ``chinook`` on the session's server, with cubesage's read-only role."""
    running = pg_server.running()
    assert running is not None
    with psycopg.connect(running.url(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {DATABASE}")
        conn.execute(
            f"DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{READER_ROLE}') "
            f"THEN CREATE ROLE {READER_ROLE} NOLOGIN; END IF; END $$"
        )
    return running.url(database=DATABASE)


@pytest.fixture(scope="module")
def row_counts(chinook_url: str) -> dict[str, int]:
    return PACK.loader()(chinook_url, PACK.schema)


@pytest.fixture(scope="module")
def chinook_model() -> SemanticModel:
    return load_model(PACK.model_dir)


@pytest.fixture(scope="module")
def backend(chinook_url: str, row_counts: dict[str, int], chinook_model: SemanticModel) -> Iterator[BuiltinBackend]:
    settings = Settings(_env_file=None, warehouse_schema=PACK.schema, today=PACK.today)
    builtin = BuiltinBackend(chinook_url, chinook_model, settings)
    yield builtin
    builtin.close()


def fetch(url: str, sql: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        return conn.execute(sql).fetchall()


def test_load_creates_every_table_with_the_expected_rows(row_counts: dict[str, int]) -> None:
    assert row_counts == EXPECTED_ROWS


def test_load_is_idempotent_and_keeps_keys(chinook_url: str, row_counts: dict[str, int]) -> None:
    assert PACK.loader()(chinook_url, PACK.schema) == row_counts
    foreign_keys = fetch(
        chinook_url,
        """
        SELECT tc.table_name, kcu.column_name FROM information_schema.table_constraints tc
        JOIN information_schema.key_column_usage kcu USING (constraint_schema, constraint_name)
        WHERE tc.constraint_schema = 'chinook' AND tc.constraint_type = 'FOREIGN KEY'""",
    )
    assert ("customer", "support_rep_id") in foreign_keys and ("employee", "reports_to") in foreign_keys
    assert len(foreign_keys) == 11
    indexed = {r[0] for r in fetch(chinook_url, "SELECT indexname FROM pg_indexes WHERE schemaname = 'chinook'")}
    assert {f"{table}_{column}_idx" for table, column in foreign_keys} - {"playlist_track_playlist_id_idx"} <= indexed


def test_pack_today_is_the_day_after_the_last_invoice(chinook_url: str, row_counts: dict[str, int]) -> None:
    (last,) = fetch(chinook_url, "SELECT max(invoice_date)::date FROM chinook.invoice")[0]
    assert PACK.today == last + dt.timedelta(days=1)


@pytest.mark.parametrize("measure", MEASURES)
def test_every_measure_compiles_and_runs(backend: BuiltinBackend, measure: str) -> None:
    result = backend.load({"measures": [measure]})
    assert len(result.rows) == 1
    value = result.rows[0][measure]
    assert isinstance(value, int | float) and value > 0, (measure, value)


def as_float_map(rows: list[tuple[Any, ...]]) -> dict[Any, float]:
    return {key: float(value) if isinstance(value, Decimal) else value for key, value in rows}


def test_sales_by_country_matches_sql(backend: BuiltinBackend, chinook_url: str) -> None:
    rows = backend.load({"measures": ["invoice_lines.sales"], "dimensions": ["invoices.billing_country"]}).rows
    expected = as_float_map(
        fetch(
            chinook_url,
            """
        SELECT i.billing_country, sum(il.unit_price * il.quantity) FROM chinook.invoice_line il
        JOIN chinook.invoice i ON i.invoice_id = il.invoice_id GROUP BY 1""",
        )
    )
    got = {r["invoices.billing_country"]: r["invoice_lines.sales"] for r in rows}
    assert got == pytest.approx(expected)
    assert rows[0]["invoices.billing_country"] == "USA" and rows[0]["invoice_lines.sales"] == pytest.approx(523.06)
    invoiced = backend.load({"measures": ["invoices.total_sales"], "dimensions": ["invoices.billing_country"]}).rows
    assert {r["invoices.billing_country"]: r["invoices.total_sales"] for r in invoiced} == pytest.approx(expected)


def test_track_count_by_genre_matches_sql(backend: BuiltinBackend, chinook_url: str) -> None:
    rows = backend.load({"measures": ["tracks.count"], "dimensions": ["genres.genre_name"]}).rows
    expected = dict(
        fetch(
            chinook_url,
            """
        SELECT g.name, count(*) FROM chinook.track t JOIN chinook.genre g ON g.genre_id = t.genre_id GROUP BY 1""",
        )
    )
    assert {r["genres.genre_name"]: r["tracks.count"] for r in rows} == expected
    assert rows[0] == {"genres.genre_name": "Rock", "tracks.count": 1297}


def test_longest_track_matches_sql(backend: BuiltinBackend, chinook_url: str) -> None:
    ((name, longest),) = fetch(chinook_url, "SELECT name, milliseconds FROM chinook.track ORDER BY 2 DESC LIMIT 1")
    assert backend.load({"measures": ["tracks.longest_ms"]}).rows[0]["tracks.longest_ms"] == longest
    top = backend.load(
        {
            "dimensions": ["tracks.track_name", "tracks.milliseconds"],
            "order": {"tracks.milliseconds": "desc"},
            "limit": 1,
        }
    ).rows
    assert top == [{"tracks.track_name": name, "tracks.milliseconds": longest}]


def test_sales_by_support_rep_goes_through_customers(backend: BuiltinBackend, chinook_url: str) -> None:
    rows = backend.load({"measures": ["invoice_lines.sales"], "dimensions": ["employees.employee_name"]}).rows
    expected = as_float_map(
        fetch(
            chinook_url,
            """
        SELECT e.first_name || ' ' || e.last_name, sum(il.unit_price * il.quantity)
        FROM chinook.invoice_line il JOIN chinook.invoice i ON i.invoice_id = il.invoice_id
        JOIN chinook.customer c ON c.customer_id = i.customer_id
        JOIN chinook.employee e ON e.employee_id = c.support_rep_id GROUP BY 1""",
        )
    )
    assert {r["employees.employee_name"]: r["invoice_lines.sales"] for r in rows} == pytest.approx(expected)


def test_bridge_counts_each_track_once(backend: BuiltinBackend) -> None:
    rows = backend.load(
        {
            "measures": ["tracks.count"],
            "filters": [{"member": "playlists.playlist_name", "operator": "equals", "values": ["Music"]}],
        }
    ).rows
    assert rows[0]["tracks.count"] == 3290  # on both "Music" playlists, counted once


def test_few_shots_validate_and_run(backend: BuiltinBackend, chinook_model: SemanticModel) -> None:
    assert PACK.few_shots is not None
    examples = yaml.safe_load(PACK.few_shots.read_text(encoding="utf-8"))["examples"]
    for example in examples:
        query = json.loads(json.dumps(example["cube_query"], default=str))  # YAML dates -> ISO strings
        assert validate(query, chinook_model, today=PACK.today) == [], example["question"]
        assert backend.load(query).rows, example["question"]
