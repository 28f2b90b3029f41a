"""Detail templates: target table, entity/value/time filters, joins, bound parameters only."""

from __future__ import annotations

import re
from datetime import date

import pytest

from cube_models.model import load_model
from cubesage_core.settings import Settings
from fourengine.glossary import parse_glossary
from router.detail.build import build_select as build
from router.detail.entities import EntityDirectory, EntityMatch
from router.detail.plan import DetailPlanError, plan_detail
from router.detail.schema import build_catalog, load_vocabulary
from router.sqlguard import GuardPolicy, guard_sql

SETTINGS = Settings()


def _glossary_table_words() -> dict[str, list[str]]:
    """cube -> the glossary's words for its table, as ``router.detail.schema.table_terms`` reads them."""
    out: dict[str, list[str]] = {}
    for term in parse_glossary(SETTINGS.glossary)[0]:
        if (term.mapped_asset_id or "").startswith("table:"):
            out.setdefault(term.mapped_asset_id.removeprefix("table:"), []).extend(
                [term.canonical_term, *term.synonyms]
            )
    return out


DEMO = build_catalog(
    load_model(SETTINGS.model_dir),
    vocabulary=load_vocabulary(SETTINGS.detail_vocabulary),
    table_words=_glossary_table_words(),
)
WANG = EntityMatch("dim_customer", "customer_id", 17, "王芳", "customer", "directory")
AURORA = EntityMatch("dim_product", "product_id", 1, "Aurora X1 headphones", "product", "directory")
EAST = EntityMatch("dim_region", "region_id", 1, "East China", "region", "directory")
POLICY = GuardPolicy(
    frozenset(
        f"warehouse.{t}"
        for t in (
            "fact_order",
            "fact_order_item",
            "fact_payment",
            "fact_refund",
            "dim_customer",
            "dim_product",
            "dim_region",
        )
    )
)


def plan(text: str, entities: list[EntityMatch], **kw):
    return plan_detail(
        text,
        language=kw.pop("language", "en"),
        entities=entities,
        time_range=kw.pop("tr", None),
        limit=kw.pop("limit", None),
        recalled_tables=kw.pop("tables", []),
        catalog=DEMO,
    )


def build_select(p):
    return build(p, DEMO)


def test_refunded_orders_of_customer() -> None:
    p = plan("list the refunded orders of customer 王芳", [WANG])
    sql, params = build_select(p)
    assert p.target == "fact_order"
    assert sorted(params.values(), key=str) == [17, "refunded"]
    assert "王芳" not in sql and "'refunded'" not in sql  # values are bound, never inlined
    assert "JOIN warehouse.dim_customer AS c" in sql
    assert guard_sql(sql, POLICY).limit == 100


def test_refunds_of_product_fan_out_is_distinct() -> None:
    p = plan("refunds for product Aurora X1 headphones", [AURORA])
    sql, _ = build_select(p)
    assert p.target == "fact_refund" and p.distinct
    assert "warehouse.fact_order_item" in sql


def test_vip_customers_of_region_chinese() -> None:
    p = plan("列出华东地区的VIP客户", [EAST], language="zh")
    sql, params = build_select(p)
    assert p.target == "dim_customer"
    assert set(params.values()) == {1, "vip"}
    assert "r.name_zh" in sql


def test_time_range_and_top_n() -> None:
    p = plan("show the latest 5 orders of Li Wei in 2024", [WANG], tr=(date(2024, 1, 1), date(2024, 12, 31)), limit=5)
    sql, params = build_select(p)
    assert p.limit == 5 and "ORDER BY o.order_ts DESC" in sql
    assert date(2025, 1, 1) in params.values()


def test_several_products_become_in_list() -> None:
    nimbus = EntityMatch("dim_product", "product_id", 2, "Nimbus S2 smartwatch", "product", "directory")
    sql, params = build_select(plan("their refund reasons", [AURORA, nimbus]))
    assert "p.product_id IN (%(p0)s, %(p1)s)" in sql and set(params.values()) == {1, 2}


def test_table_lookup_uses_recalled_tables() -> None:
    p = plan("which table has refund reasons", [], tables=["fact_refund", "fact_order"])
    assert p.kind == "table_lookup" and p.target == "fact_refund"


def test_nothing_to_list_is_a_clear_error() -> None:
    with pytest.raises(DetailPlanError):
        plan("hello there", [])


def test_directory_longest_match_and_word_bounds() -> None:
    def customer(key: int, name: str) -> EntityMatch:
        return EntityMatch("dim_customer", "customer_id", key, name, "customer", "directory")

    d = EntityDirectory(
        {"li wei": customer(5, "Li Wei"), "王芳": customer(17, "王芳"), "王芳芳": customer(18, "王芳芳"), "华东": EAST}
    )
    assert [m.key_value for m in d.match("王芳芳的订单")] == [18]
    assert d.match("orders of Eli Weiss") == []
    assert {m.key_value for m in d.match("show orders of Li Wei in 华东")} == {5, 1}


@pytest.mark.parametrize(
    "text",
    ["show all rows of the employee_salaries table", "员工 salary_records表的内容", "list table hr.employee_pay"],
)
def test_unknown_table_is_named_in_the_error(text: str) -> None:
    with pytest.raises(DetailPlanError, match="no table named"):
        plan(text, [], tables=["fact_payment"])


def test_recalled_table_alone_does_not_pick_rows_to_list() -> None:
    with pytest.raises(DetailPlanError):
        plan("show me the salaries", [], tables=["fact_payment"])


@pytest.mark.parametrize(
    ("text", "table"),
    [
        ("哪个表有退款原因", "fact_refund"),
        ("which table stores payment methods?", "fact_payment"),
        ("哪张表存储客户的注册日期", "dim_customer"),
    ],
)
def test_table_lookup_puts_the_named_table_first(text: str, table: str) -> None:
    p = plan(text, [], tables=["fact_order", "dim_region", "fact_refund", "fact_payment", "dim_customer"])
    assert p.kind == "table_lookup" and p.target == table


@pytest.mark.parametrize(
    ("text", "column", "op", "value"),
    [
        ("refunds above 1,000 last month", "fact_refund.amount", ">", 1000.0),
        ("张敏超过500元的支付记录", "fact_payment.amount", ">", 500.0),
        ("5000元以上的支付记录", "fact_payment.amount", ">=", 5000.0),
        ("payments of at least 2k", "fact_payment.amount", ">=", 2000.0),
        ("products under 100", "dim_product.unit_price", "<", 100.0),
    ],
)
def test_an_amount_bound_filters_the_column_its_cube_sums(text: str, column: str, op: str, value: float) -> None:
    p = plan(text, [])
    bound = next(f for f in p.filters if f"{f.table}.{f.column}" == column)
    assert (bound.op, bound.value) == (op, value)
    sql, params = build_select(p)
    assert value in params.values() and re.search(r"[<>]=? %\(p\d+\)s", sql)  # bound, not inlined
    assert guard_sql(sql, POLICY)
    assert tuple(column.split(".")) in p.columns  # the compared amount is shown


def test_counts_and_periods_are_no_amounts_and_tables_without_amounts_say_so() -> None:
    assert not any(f.op in (">", "<=") for f in plan("refunds of the last 7 days", []).filters)
    assert not plan("orders of customers with more than 5 orders", [WANG]).filters[1:]
    with pytest.raises(DetailPlanError, match="no amount to compare with 'over 5000'"):
        plan("orders over 5000 in June 2025", [])


def test_buying_lists_order_lines_and_negations_are_refused() -> None:
    assert plan("what did Emma Johnson buy in 2024?", [WANG]).target == "fact_order_item"
    with pytest.raises(DetailPlanError, match="did not happen"):
        plan("customers who have never ordered", [])


@pytest.mark.parametrize(
    ("text", "target"),
    [
        ("show the payments of order 8579", "fact_payment"),
        ("订单8579的支付记录", "fact_payment"),
        ("order #8579", "fact_order"),
    ],
)
def test_a_row_named_by_its_key_filters_by_that_key(text: str, target: str) -> None:
    p = plan(text, [])
    assert p.target == target
    assert [(f.table, f.column, f.value) for f in p.filters] == [("fact_order", "order_id", 8579)]
    sql, params = build_select(p)
    assert 8579 in params.values() and "8579" not in sql


def test_years_are_no_keys_and_n_latest_limits() -> None:
    assert not plan("orders 2024", []).filters and not plan("2024年的订单", []).filters
    assert plan("show me the 5 latest orders", []).limit == 5


def test_values_read_from_the_warehouse_fill_the_columns_nothing_else_covers() -> None:
    observed = [
        {"canonical_term": c, "synonyms": [], "mapped_asset_id": f"dimension:{m}", "filter_value": v}
        for c, m, v in [
            ("北京", "customers.city", "北京 Beijing"),
            ("Pulse", "products.brand", "Pulse"),
            ("cancelled", "orders.status", "cancelled"),
            ("Aurora X1 headphones", "products.product_name", "Aurora X1 headphones"),
        ]
    ]
    catalog = build_catalog(
        load_model(SETTINGS.model_dir), vocabulary=load_vocabulary(SETTINGS.detail_vocabulary), observed=observed
    )
    added = {(w.table, w.column) for w in catalog.values} - {(w.table, w.column) for w in DEMO.values}
    assert added == {("dim_customer", "city"), ("dim_product", "brand")}  # not status (vocabulary), not names
    p = plan_detail(
        "customers in 北京",
        language="zh",
        entities=[],
        time_range=None,
        limit=None,
        recalled_tables=[],
        catalog=catalog,
    )
    assert [(f.column, f.value) for f in p.filters] == [("city", "北京 Beijing")]
    aurora = plan_detail(
        "refunds of Aurora X1 headphones",
        language="en",
        entities=[AURORA],
        time_range=None,
        limit=None,
        recalled_tables=[],
        catalog=catalog,
    )
    assert [f.column for f in aurora.filters] == ["product_id"]  # the product's name is no brand filter
