"""Mixed path join: detail rows summarised per shared entity and joined onto the aggregate ranking."""

from __future__ import annotations

from cube_models.model import load_model
from cubesage_core.settings import Settings
from router.detail.schema import build_catalog, load_vocabulary
from router.mixed import JoinColumns, join_columns, join_results
from router.tables import ResultTable, table_from_rows

AGG = table_from_rows(
    [
        {"products.product_name": "Aurora X1 headphones", "order_items.gmv": "1000.5"},
        {"products.product_name": "Lotus K3 kettle", "order_items.gmv": "200"},
    ]
)
REFUNDS = ResultTable(
    ["refund_id", "reason", "product_name"],
    [
        [1, "damaged", "Aurora X1 headphones"],
        [2, "damaged", "aurora x1 headphones"],
        [3, "late_delivery", "Aurora X1 headphones"],
        [4, "other", "Nimbus S2 smartwatch"],
    ],
)
COLUMNS = JoinColumns(entity=("customer_name", "product_name", "customer_id"), summary=("status", "reason"))


def test_cube_rows_become_numbers() -> None:
    assert AGG.rows[0] == ["Aurora X1 headphones", 1000.5] and AGG.rows[1][1] == 200


def test_join_keeps_one_row_per_aggregate_row() -> None:
    mixed = join_results(AGG, REFUNDS, COLUMNS)
    assert mixed.join == {"aggregate": "products.product_name", "detail": "product_name"}
    assert mixed.table.columns == ["products.product_name", "order_items.gmv", "detail_rows", "reason_counts"]
    assert mixed.table.rows[0][2:] == [3, "damaged (2), late_delivery (1)"]
    assert mixed.table.rows[1][2:] == [0, ""]


def test_no_shared_key_gives_linked_sections() -> None:
    agg = table_from_rows([{"orders.channel": "web", "orders.count": "10"}])
    mixed = join_results(agg, REFUNDS, COLUMNS)
    assert mixed.join is None and mixed.table is agg
    assert [s["kind"] for s in mixed.sections] == ["aggregate", "detail"]


def test_rows_past_the_covered_ones_stay_empty() -> None:
    mixed = join_results(AGG, REFUNDS, COLUMNS, covered_rows=1)
    assert mixed.table.rows[0][2] == 3 and mixed.table.rows[1][2:] == [None, None]


def test_join_columns_come_from_the_catalog() -> None:
    settings = Settings()
    columns = join_columns(
        build_catalog(load_model(settings.model_dir), vocabulary=load_vocabulary(settings.detail_vocabulary))
    )
    assert {"customer_name", "product_name", "name_en", "name_zh", "customer_id", "product_id"} <= set(columns.entity)
    assert "channel" not in columns.entity and "order_id" not in columns.entity  # orders name no entity
    assert {"reason", "method", "status", "channel", "segment", "category"} <= set(columns.summary)
    assert join_results(AGG, REFUNDS, JoinColumns()).join is None  # a model without entity tables joins nothing


def test_counts_from_sql_replace_the_fetched_rows() -> None:
    """A capped detail query fetched 4 rows; the SQL counts say how many there are per product and reason."""
    counts = [
        ("Aurora X1 headphones", "damaged", 40),
        ("aurora x1 headphones", "other", 2),
        ("Lotus K3 kettle", "late_delivery", 7),
        ("Nimbus S2 smartwatch", "other", 1),
    ]
    mixed = join_results(AGG, REFUNDS, COLUMNS, counts=counts)
    assert mixed.table.rows[0][2:] == [42, "damaged (40), other (2)"]
    assert mixed.table.rows[1][2:] == [7, "late_delivery (7)"]
    assert mixed.sections[1]["rows"] == REFUNDS.rows  # the detail section keeps the rows that were fetched


def test_a_decimal_point_ends_no_sentence_of_a_mixed_question() -> None:
    from router.pipeline import _last_sentence_rows

    zh = "2025年单笔超过1.5万元的支付有多少笔?"
    assert _last_sentence_rows(zh + "分别是哪些?") == zh
    en = "How many orders over 1.5k were there."
    assert _last_sentence_rows(en + " List them.") == en
