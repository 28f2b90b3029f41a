"""The rows behind an aggregate: the drill-down Cube query of a mixed question's row clause."""

from __future__ import annotations

from cube_models.model import load_model
from cubesage_core.settings import REPO_ROOT
from router.aggregate.drill import drill_query

MODEL = load_model(REPO_ROOT / "demo" / "model")


def test_the_drill_down_keeps_filters_segments_and_ranges_and_asks_for_the_cubes_rows() -> None:
    aggregate = {
        "measures": ["orders.count"],
        "segments": ["orders.completed"],
        "filters": [{"member": "regions.name_en", "operator": "equals", "values": ["East China"]}],
        "timeDimensions": [
            {"dimension": "orders.order_date", "granularity": "month", "dateRange": ["2025-01-01", "2025-03-31"]}
        ],
    }
    query = drill_query(aggregate, [{"orders.count": 12}], MODEL, "orders", limit=500, shown=20)
    assert query is not None
    key = next(f"orders.{d.name}" for d in MODEL.cubes["orders"].dimensions.values() if d.primary_key)
    assert query["dimensions"][0] == key and "orders.count" not in query["dimensions"]
    assert query["filters"] == aggregate["filters"] and query["limit"] == 500
    assert query["timeDimensions"] == [{"dimension": "orders.order_date", "dateRange": ["2025-01-01", "2025-03-31"]}]
    assert query["segments"] == ["orders.completed"]


def test_group_by_values_of_the_rows_shown_become_filters() -> None:
    aggregate = {
        "measures": ["orders.count"],
        "dimensions": ["customers.customer_name"],
        "order": [["orders.count", "desc"]],
        "limit": 3,
    }
    rows = [{"customers.customer_name": n, "orders.count": c} for n, c in (("Li Wei", 9), ("王芳", 8), (None, 7))]
    query = drill_query(aggregate, rows, MODEL, "orders", limit=500, shown=2)
    assert query is not None
    assert query["filters"] == [
        {"member": "customers.customer_name", "operator": "equals", "values": ["Li Wei", "王芳"]}
    ]


def test_a_bound_on_a_measure_bounds_groups_not_rows() -> None:
    aggregate = {
        "measures": ["orders.count"],
        "dimensions": ["customers.customer_name"],
        "filters": [{"member": "orders.count", "operator": "gt", "values": ["5"]}],
    }
    assert drill_query(aggregate, [], MODEL, "orders", limit=500, shown=20) is None
    assert drill_query({"measures": ["orders.count"]}, [], MODEL, "no_such_cube", limit=500, shown=20) is None


def test_a_filtered_count_without_a_segment_drills_through_its_column_value() -> None:
    query = drill_query({"measures": ["orders.cancelled_count"]}, [], MODEL, "orders", limit=500, shown=20)
    assert query is not None and "segments" not in query
    assert query["filters"] == [{"member": "orders.status", "operator": "equals", "values": ["cancelled"]}]


def test_a_referring_column_is_followed_by_the_referred_rows_label() -> None:
    from router.parse.facts import label, with_referred_labels

    dims = with_referred_labels(MODEL, "orders", ["orders.order_id", "orders.customer_id", "orders.status"])
    assert dims == ["orders.order_id", "orders.customer_id", label(MODEL, "customers"), "orders.status"]
