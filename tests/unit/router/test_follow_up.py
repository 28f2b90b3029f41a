"""Follow-ups edit the previous Cube query (fast mode): only what the follow-up names changes."""

from __future__ import annotations

from datetime import date
from typing import Any

from cube_models.model import load_model
from cubesage_core.settings import REPO_ROOT
from router.aggregate import AggregateContext, run_aggregate
from router.aggregate.follow_up import FollowUp, edit_query
from router.understanding import understand
from tests.unit.router.test_aggregate_slots import COUNT, EAST, GMV, NORTH, FakeBackend

TODAY = date(2025, 6, 30)
MODEL = load_model(REPO_ROOT / "demo" / "model")
PREVIOUS: dict[str, Any] = {
    "measures": ["order_items.gmv"],
    "dimensions": ["regions.name_en"],
    "order": [["order_items.gmv", "desc"]],
    "timeDimensions": [{"dimension": "orders.order_ts", "dateRange": ["2025-05-01", "2025-05-31"]}],
}
CHANNEL = {
    "term_id": "channel",
    "canonical_term": "channel",
    "mapped_asset_type": "dimension",
    "mapped_asset_id": "dimension:orders.channel",
}


def edited(question: str, *bindings: dict[str, Any], previous: dict[str, Any] | None = None) -> dict[str, Any]:
    u = understand(question, TODAY, use_llm=False)
    return edit_query(previous or PREVIOUS, u, {"bindings": list(bindings)}, MODEL).query


def test_a_named_measure_replaces_the_measures_and_their_order() -> None:
    q = edited("what about order count?", COUNT)
    assert q["measures"] == ["orders.count"] and q["order"] == [["orders.count", "desc"]]
    assert q["dimensions"] == PREVIOUS["dimensions"] and q["timeDimensions"] == PREVIOUS["timeDimensions"]


def test_a_named_period_replaces_the_date_range_only() -> None:
    q = edited("and in 2024?")
    assert q["timeDimensions"] == [{"dimension": "orders.order_ts", "dateRange": ["2024-01-01", "2024-12-31"]}]
    assert q["measures"] == ["order_items.gmv"] and q["dimensions"] == ["regions.name_en"]


def test_a_period_on_a_query_without_time_uses_the_measures_time_dimension() -> None:
    q = edited("and last year?", previous={"measures": ["orders.count"]})
    assert q["timeDimensions"] == [{"dimension": "orders.order_ts", "dateRange": ["2024-01-01", "2024-12-31"]}]


def test_values_set_or_replace_a_filter_and_dimensions_are_added_once() -> None:
    east = edited("只看华东", EAST)
    assert east["filters"] == [{"member": "regions.region_code", "operator": "equals", "values": ["east"]}]
    north = edited("只看华北", NORTH, previous=east)
    assert north["filters"] == [{"member": "regions.region_code", "operator": "equals", "values": ["north"]}]
    by_channel = edited("and by channel?", CHANNEL)
    assert by_channel["dimensions"] == ["regions.name_en", "orders.channel"]
    zh_region = edited("按地区呢", previous=by_channel)  # regions.name_zh is the region already shown
    assert zh_region["dimensions"] == ["regions.name_en", "orders.channel"]


def test_a_ranking_orders_and_limits() -> None:
    q = edited("top 3 only")
    assert q["limit"] == 3 and q["order"] == [["order_items.gmv", "desc"]]
    assert PREVIOUS.get("limit") is None  # the previous query is not modified


def test_guardrails_check_the_edit_against_the_follow_ups_own_bindings() -> None:
    # the joined conversation binds GMV and order count; the follow-up itself only order count
    merged = understand("GMV by region last month what about order count?", TODAY, use_llm=False)
    own = understand("what about order count?", TODAY, use_llm=False)
    backend = FakeBackend([[{"regions.name_en": "East China", "orders.count": 3}]])
    result = run_aggregate(
        merged,
        AggregateContext.of({"bindings": [GMV, COUNT]}),
        MODEL,
        backend,
        today=TODAY,
        use_llm=False,
        follow_up=FollowUp(PREVIOUS, own, {"bindings": [COUNT]}),
    )
    assert backend.queries[0]["measures"] == ["orders.count"] and result.retries == 0


def test_a_filter_only_follow_up_keeps_the_previous_measure_allowed() -> None:
    merged = understand("GMV by region last month 只看华东", TODAY, use_llm=False)
    own = understand("只看华东", TODAY, use_llm=False)
    backend = FakeBackend([[{"regions.name_en": "East China", "order_items.gmv": 3}]])
    result = run_aggregate(
        merged,
        AggregateContext.of({"bindings": [GMV, EAST]}),
        MODEL,
        backend,
        today=TODAY,
        use_llm=False,
        follow_up=FollowUp(PREVIOUS, own, {"bindings": [EAST]}),
    )
    assert backend.queries[0]["measures"] == ["order_items.gmv"] and not result.problems
    assert backend.queries[0]["filters"] == [
        {"member": "regions.region_code", "operator": "equals", "values": ["east"]}
    ]
