"""Detail questions over the demo warehouse: names resolve to their rows, topics to their tables."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from answer.bootstrap import warehouse_map_of
from cubesage_core.db import connection
from cubesage_core.settings import REPO_ROOT, Settings
from sag_index.backends import get_store
from sag_index.errors import StoreUnavailable
from sag_index.recall import SagRecall
from sag_index.warehouse import index_warehouse

pytestmark = pytest.mark.integration
CUSTOMERS = ["王芳", "李伟", "张敏", "刘洋", "Li Wei", "Emma Johnson", "Oliver Smith", "Chen Jing"]
PRODUCTS = ["Aurora X1 headphones", "Nimbus S2 smartwatch", "Lotus K3 kettle", "Peak R5 running shoes"]


@pytest.fixture(scope="module")
def recall(pg_url: str) -> Iterator[SagRecall]:
    index_warehouse(pg_url, warehouse_map_of(pg_url), REPO_ROOT / "demo" / "wiki")
    settings = Settings(es_url=None, sag_cache_refresh_s=0.5)
    sag = SagRecall(pg_url, get_store(settings, pg_url), settings)
    yield sag
    sag.close()


def _key(pg_url: str, table: str, key: str, name_col: str, name: str) -> int:
    with connection(pg_url) as conn:
        return conn.execute(f"SELECT {key} FROM warehouse.{table} WHERE {name_col} = %s", (name,)).fetchone()[0]


def test_index_warehouse_is_idempotent(pg_url: str, recall: SagRecall) -> None:
    report = index_warehouse(pg_url, warehouse_map_of(pg_url), REPO_ROOT / "demo" / "wiki")
    assert report.wiki.chunks_processed == 0 and report.rows.chunks_processed == 0
    assert report.rows.chunks_already_indexed == sum(report.row_counts.values())
    with connection(pg_url) as conn:
        n_rows = conn.execute(
            "SELECT (SELECT count(*) FROM warehouse.dim_customer) + (SELECT count(*) FROM "
            "warehouse.dim_product) + (SELECT count(*) FROM warehouse.dim_region)"
        ).fetchone()[0]
        events = conn.execute(
            "SELECT count(*) FROM sag.event e JOIN sag.source_chunk c USING (chunk_id) WHERE c.kind = 'row'"
        ).fetchone()[0]
    assert report.row_counts["warehouse.dim_customer"] > 1000
    assert events == n_rows


@pytest.mark.parametrize("name", CUSTOMERS)
def test_named_customers_resolve_to_their_rows(pg_url: str, recall: SagRecall, name: str) -> None:
    rows = recall.recall_rows(f"list the refunded orders of customer {name} last month")
    assert rows, name
    top = rows[0]
    assert (top.table, top.key_column, top.label, top.entity_type) == (
        "warehouse.dim_customer",
        "customer_id",
        name,
        "customer",
    )
    assert top.key_value == _key(pg_url, "dim_customer", "customer_id", "customer_name", name)
    assert top.score == 1.0


@pytest.mark.parametrize("name", PRODUCTS)
def test_named_products_resolve_to_their_rows(pg_url: str, recall: SagRecall, name: str) -> None:
    top = recall.recall_rows(f"show the refund reasons for {name} this year")[0]
    assert (top.table, top.key_column, top.label) == ("warehouse.dim_product", "product_id", name)
    assert top.key_value == _key(pg_url, "dim_product", "product_id", "product_name", name)


def test_chinese_customer_in_chinese_question(pg_url: str, recall: SagRecall) -> None:
    top = recall.recall_rows("客户王芳上个月的退款订单")[0]
    assert (top.label, top.key_value) == ("王芳", _key(pg_url, "dim_customer", "customer_id", "customer_name", "王芳"))


@pytest.mark.parametrize("question", ["华东地区本月GMV", "GMV in East China this quarter"])
def test_regions_resolve_in_both_languages(recall: SagRecall, question: str) -> None:
    top = recall.recall_rows(question)[0]
    assert (top.table, top.key_column, top.key_value, top.label) == (
        "warehouse.dim_region",
        "region_id",
        1,
        "East China",
    )


def test_misspelt_product_resolves_by_name_vector(recall: SagRecall) -> None:
    rows = recall.recall_rows("refunds of the Aurora X1 headphone")
    assert rows and rows[0].label == "Aurora X1 headphones" and 0.8 <= rows[0].score < 1.0


@pytest.mark.parametrize(
    "question",
    [
        "what is the GMV by month",
        "which table has refund reasons",
        "本月的订单量是多少",
        "show the refund rate trend for the app channel",
        "Average order value last quarter",
    ],
)
def test_questions_naming_no_entity_get_no_rows(recall: SagRecall, question: str) -> None:
    assert recall.recall_rows(question) == []


def test_refund_reasons_recall_fact_refund_first(recall: SagRecall) -> None:
    hits = recall.recall_tables("which table has refund reasons")
    assert hits[0].table == "warehouse.fact_refund"
    assert hits[0].event_ids and hits[0].chunk_ids


@pytest.mark.parametrize(
    ("question", "table"),
    [
        ("how did customers pay, alipay or wechat", "warehouse.fact_payment"),
        ("GMV by product category", "warehouse.fact_order_item"),
        ("各地区的订单量", "warehouse.fact_order"),
    ],
)
def test_topics_recall_their_tables(recall: SagRecall, question: str, table: str) -> None:
    assert table in [h.table for h in recall.recall_tables(question)[:3]]


def test_named_customer_brings_its_dimension_table(recall: SagRecall) -> None:
    tables = [h.table for h in recall.recall_tables("orders of customer 王芳")]
    assert "warehouse.fact_order" in tables and "warehouse.dim_customer" in tables


def test_store_factory_fallback_and_typed_error(pg_url: str) -> None:
    down = "http://127.0.0.1:9"
    store = get_store(Settings(es_url=down, es_fallback_postgres=True), pg_url)
    assert store.backend == "postgres" and store.fallback_reason and "unreachable" in store.fallback_reason
    store.close()
    with pytest.raises(StoreUnavailable, match="unreachable"):
        get_store(Settings(es_url=down, es_fallback_postgres=False), pg_url)


def test_store_factory_picks_elasticsearch(pg_url: str, es_url: str) -> None:
    store = get_store(Settings(es_url=es_url, es_index_prefix="sagfactory_"), pg_url)
    assert store.backend == "elasticsearch" and store.fallback_reason is None
    store.reset()
    store.close()


def test_exact_name_suppresses_near_spellings(recall: SagRecall) -> None:
    rows = recall.recall_rows("refund reasons of Peak R5 running shoes")
    assert [r.label for r in rows] == ["Peak R5 running shoes"]


def test_chinese_question_recalls_refund_table(recall: SagRecall) -> None:
    assert recall.recall_tables("哪个表有退款原因")[0].table == "warehouse.fact_refund"


def test_table_searches_are_memoised_until_the_index_changes(pg_url: str, recall: SagRecall) -> None:
    question = "which table records payment methods"
    first = recall.search(question)
    assert recall.search(question) is first  # memoised
    recall.refresh()  # re-indexing in this process
    second = recall.search(question)
    assert second is not first and [e.event_id for e in second.events] == [e.event_id for e in first.events]
    with connection(pg_url) as conn:  # another process writes to the index: the refresh key changes
        conn.execute(
            "UPDATE sag.source_chunk SET meta = meta WHERE chunk_id = (SELECT min(chunk_id) FROM sag.source_chunk)"
        )
    stop = time.monotonic() + 15
    while recall.search(question) is second and time.monotonic() < stop:
        time.sleep(0.2)
    assert recall.search(question) is not second


def test_a_changed_row_reindexes_that_row_only(pg_url: str, recall: SagRecall) -> None:
    """Incremental re-indexing: a renamed customer is one new chunk and one pruned, the rest is skipped."""
    with connection(pg_url) as conn:
        key, name = conn.execute(
            "SELECT customer_id, customer_name FROM warehouse.dim_customer ORDER BY customer_id LIMIT 1"
        ).fetchone()
        conn.execute(
            "UPDATE warehouse.dim_customer SET customer_name = %s WHERE customer_id = %s", ("Zelda Incremental", key)
        )
    try:
        report = index_warehouse(pg_url, warehouse_map_of(pg_url), REPO_ROOT / "demo" / "wiki")
        assert (report.rows.chunks_processed, report.chunks_pruned) == (1, 1)
        assert report.wiki.chunks_processed == 0
        assert report.rows.chunks_already_indexed == sum(report.row_counts.values()) - 1
        with connection(pg_url) as conn:
            assert conn.execute("SELECT count(*) FROM sag.entity WHERE name = 'Zelda Incremental'").fetchone()[0] == 1
    finally:
        with connection(pg_url) as conn:
            conn.execute("UPDATE warehouse.dim_customer SET customer_name = %s WHERE customer_id = %s", (name, key))
        back = index_warehouse(pg_url, warehouse_map_of(pg_url), REPO_ROOT / "demo" / "wiki")
    assert (back.rows.chunks_processed, back.chunks_pruned) == (1, 1)
