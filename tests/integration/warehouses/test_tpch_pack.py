"""The TPC-H pack end to end: SF 0.1 loaded into PostgreSQL, the model validated, every measure run on
the built-in backend, and a few results checked against hand-written SQL."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from cube_models.backends import BuiltinBackend
from cube_models.model import SemanticModel, load_model
from cube_models.validate import validate
from cubesage_core.settings import Settings
from fourengine.fewshot_cache import parse_few_shots
from tests.integration.warehouses.conftest import LoadedPack

pytestmark = pytest.mark.integration
EXACT_COUNTS = {
    "region": 5,
    "nation": 25,
    "supplier": 1_000,
    "customer": 15_000,
    "part": 20_000,
    "partsupp": 80_000,
    "orders": 150_000,
}
# count(DISTINCT) over 600k joined rows takes seconds on a busy 2-core machine
TIMEOUT_MS = 120_000


@pytest.fixture(scope="module")
def model(tpch_loaded: LoadedPack) -> SemanticModel:
    return load_model(tpch_loaded.pack.model_dir)


@pytest.fixture(scope="module")
def builtin(tpch_loaded: LoadedPack, model: SemanticModel) -> Iterator[BuiltinBackend]:
    settings = Settings(
        _env_file=None,
        warehouse_schema=tpch_loaded.pack.schema,
        statement_timeout_ms=TIMEOUT_MS,
        today=tpch_loaded.pack.today,
    )
    backend = BuiltinBackend(tpch_loaded.url, model, settings)
    yield backend
    backend.close()


def _rows(url: str, sql: str, *params: object) -> list[tuple]:
    with psycopg.connect(url) as conn:  # the pack's database has no pgvector (db.connection needs it)
        return conn.execute(sql, params).fetchall()


def _value(url: str, sql: str, *params: object) -> object:
    return _rows(url, sql, *params)[0][0]


def test_row_counts_at_scale_factor_0_1(tpch_loaded: LoadedPack) -> None:
    counts = tpch_loaded.counts
    assert {t: counts[t] for t in EXACT_COUNTS} == EXACT_COUNTS
    assert 590_000 <= counts["lineitem"] <= 610_000
    for table, count in counts.items():
        assert _value(tpch_loaded.url, f"SELECT count(*) FROM tpch.{table}") == count
    assert tpch_loaded.seconds < 60


def test_keys_types_and_today(tpch_loaded: LoadedPack) -> None:
    url = tpch_loaded.url
    constraints = dict(
        _rows(
            url,
            "SELECT contype::text, count(*) FROM pg_constraint c"
            " JOIN pg_namespace n ON n.oid = c.connamespace"
            " WHERE n.nspname = 'tpch' GROUP BY 1",
        )
    )
    assert constraints["p"] == 8 and constraints["f"] == 10
    types = dict(
        _rows(
            url,
            "SELECT column_name, data_type FROM information_schema.columns"
            " WHERE table_schema = 'tpch' AND table_name = 'lineitem'",
        )
    )
    assert (types["l_extendedprice"], types["l_shipdate"], types["l_returnflag"]) == ("numeric", "date", "character")
    assert _value(url, "SELECT max(o_orderdate) FROM tpch.orders") == tpch_loaded.pack.today
    assert _value(url, "SELECT count(*) FROM tpch.customer WHERE c_name <> trim(c_name)") == 0


def test_every_measure_runs(builtin: BuiltinBackend, model: SemanticModel) -> None:
    measures = model.measures()
    assert len(measures) >= 50
    for measure in measures:
        result = builtin.load({"measures": [measure.path]})
        assert len(result.rows) == 1 and result.rows[0][measure.path] is not None, measure.path


def test_few_shots_run(tpch_loaded: LoadedPack, builtin: BuiltinBackend, model: SemanticModel) -> None:
    for example in parse_few_shots(tpch_loaded.pack.few_shots):
        assert validate(example["cube_query"], model, today=tpch_loaded.pack.today) == []
        assert builtin.load(example["cube_query"]).rows, example["question"]


def test_revenue_by_region_1995_matches_sql(tpch_loaded: LoadedPack, builtin: BuiltinBackend) -> None:
    result = builtin.load(
        {
            "measures": ["lineitem.revenue"],
            "dimensions": ["region.name"],
            "timeDimensions": [{"dimension": "orders.order_date", "dateRange": ["1995-01-01", "1995-12-31"]}],
        }
    )
    expected = dict(
        _rows(
            tpch_loaded.url,
            """
        SELECT r.r_name, sum(l.l_extendedprice * (1 - l.l_discount))
        FROM tpch.lineitem l JOIN tpch.orders o ON o.o_orderkey = l.l_orderkey
        JOIN tpch.customer c ON c.c_custkey = o.o_custkey JOIN tpch.nation n ON n.n_nationkey = c.c_nationkey
        JOIN tpch.region r ON r.r_regionkey = n.n_regionkey
        WHERE o.o_orderdate BETWEEN '1995-01-01' AND '1995-12-31' GROUP BY 1""",
        )
    )
    got = {r["region.name"]: r["lineitem.revenue"] for r in result.rows}
    assert set(got) == set(expected) == {"AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"}
    for region, revenue in expected.items():
        assert got[region] == pytest.approx(float(revenue), rel=1e-9)


def test_order_count_and_late_shipments_match_sql(tpch_loaded: LoadedPack, builtin: BuiltinBackend) -> None:
    url = tpch_loaded.url
    orders = builtin.load(
        {
            "measures": ["orders.count", "orders.urgent_count"],
            "timeDimensions": [{"dimension": "orders.order_date", "dateRange": "last year"}],
        }
    )
    assert orders.rows == [
        {
            "orders.count": _value(
                url, "SELECT count(*) FROM tpch.orders WHERE o_orderdate BETWEEN '1997-01-01' AND '1997-12-31'"
            ),
            "orders.urgent_count": _value(
                url,
                "SELECT count(*) FROM tpch.orders WHERE o_orderdate BETWEEN"
                " '1997-01-01' AND '1997-12-31' AND o_orderpriority IN"
                " ('1-URGENT', '2-HIGH')",
            ),
        }
    ]
    late = builtin.load(
        {
            "measures": ["lineitem.late_count", "lineitem.late_rate"],
            "dimensions": ["lineitem.ship_mode"],
            "filters": [{"member": "lineitem.ship_mode", "operator": "equals", "values": ["AIR"]}],
        }
    )
    late_air, lines_air = _rows(
        url,
        "SELECT count(*) FILTER (WHERE l_receiptdate > l_commitdate), count(*)"
        " FROM tpch.lineitem WHERE l_shipmode = 'AIR'",
    )[0]
    assert late.rows[0]["lineitem.late_count"] == late_air
    assert late.rows[0]["lineitem.late_rate"] == pytest.approx(late_air / lines_air)


def test_loading_again_gives_the_same_data(tpch_loaded: LoadedPack) -> None:
    """Runs last: the schema is dropped and recreated, with the same rows."""
    revenue_sql = "SELECT sum(l_extendedprice * (1 - l_discount)) FROM tpch.lineitem"
    before = _value(tpch_loaded.url, revenue_sql)
    assert tpch_loaded.pack.loader()(tpch_loaded.url, tpch_loaded.pack.schema) == tpch_loaded.counts
    assert _value(tpch_loaded.url, revenue_sql) == before


def test_bad_schema_name_is_refused(tpch_loaded: LoadedPack) -> None:
    with pytest.raises(ValueError, match="schema must be"):
        tpch_loaded.pack.loader()(tpch_loaded.url, "tpch; DROP TABLE x")
