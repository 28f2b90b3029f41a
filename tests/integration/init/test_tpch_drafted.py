"""`cubesage init` on a fresh database holding only TPC-H SF 0.1, with models it drafts and nothing else (no
glossary, wiki, few-shots or pack models); questions in the drafted models' own words through the HTTP API,
answers checked against hand-written SQL."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from cube_models.model import load_model
from cubesage_core.embedded_pg import EmbeddedPostgres
from tests.integration.init._own import Case, check, fresh_database, initialised_api
from tests.live_api import LiveApi
from warehouses.tpch.load import load as load_tpch

pytestmark = pytest.mark.integration

CASES = [
    Case(
        "Total extended price by ship mode",
        "aggregate",
        "SELECT l_shipmode, sum(l_extendedprice) FROM tpch.lineitem GROUP BY 1",
        ("l_shipmode", "l_extendedprice_sum"),
    ),
    Case(
        "Total quantity by order status",
        "aggregate",
        "SELECT o.o_orderstatus, sum(l.l_quantity) FROM tpch.lineitem l "
        "JOIN tpch.orders o ON o.o_orderkey = l.l_orderkey GROUP BY 1",
        ("o_orderstatus", "l_quantity_sum"),
    ),
    Case(
        "Average total price by order priority",
        "aggregate",
        "SELECT o_orderpriority, avg(o_totalprice) FROM tpch.orders GROUP BY 1",
        ("o_orderpriority", "o_totalprice_avg"),
    ),
    Case(
        "Total acctbal by mktsegment",
        "aggregate",
        "SELECT c_mktsegment, sum(c_acctbal) FROM tpch.customer GROUP BY 1",
        ("c_mktsegment", "c_acctbal_sum"),
    ),
    Case("How many orders are there?", "aggregate", "SELECT count(*) FROM tpch.orders", ("orders.count",)),
    Case(
        "How many orders in 1996?",
        "aggregate",
        "SELECT count(*) FROM tpch.orders WHERE o_orderdate >= '1996-01-01' AND o_orderdate < '1997-01-01'",
        ("orders.count",),
    ),
    Case(
        "list the orders of Customer#000000001",
        "detail",
        "SELECT o.o_orderkey FROM tpch.orders o JOIN tpch.customer c ON c.c_custkey = o.o_custkey "
        "WHERE c.c_name = 'Customer#000000001'",
        ("o_orderkey",),
    ),
    Case(
        "list the lineitems of order 7",
        "detail",
        "SELECT l_orderkey, l_linenumber FROM tpch.lineitem WHERE l_orderkey = 7",
        ("l_orderkey", "l_linenumber"),
    ),
]


@pytest.fixture(scope="module")
def tpch_url(pg_server: EmbeddedPostgres) -> Iterator[str]:
    with fresh_database(pg_server, "init_tpch") as url:
        load_tpch(url, "tpch")
        yield url


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("tpch-own")


@pytest.fixture(scope="module")
def api(tpch_url: str, work: Path) -> Iterator[LiveApi]:
    with initialised_api(tpch_url, work, ["--schema", "tpch", "--models", str(work / "model")]) as live:
        yield live


def test_init_drafted_the_models_and_nothing_else(api: LiveApi, work: Path) -> None:
    model = load_model(work / "model")
    assert sorted(model.cubes) == ["customer", "lineitem", "nation", "orders", "part", "partsupp", "region", "supplier"]
    config = tomllib.loads((work / "cubesage.toml").read_text(encoding="utf-8"))
    assert config["warehouse_schemas"] == ["tpch"] and config["model_dir"] == str(work / "model")
    assert not {"glossary", "wiki_dir", "detail_vocabulary", "today"} & set(config)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_answers_match_sql(api: LiveApi, tpch_url: str, case: Case) -> None:
    check(api, tpch_url, case)
