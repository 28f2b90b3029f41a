"""Slot filling as passes (router.aggregate.slots.PASSES): each pass fills its own slots, in order."""

from __future__ import annotations

from datetime import date

from cube_models.model import load_model
from cubesage_core.settings import REPO_ROOT
from router.aggregate.context import AggregateContext
from router.aggregate.slots import PASSES, fill_slots
from router.aggregate.slots.base import Slots
from router.understanding import understand
from tests.unit.router.test_aggregate_slots import EAST, GMV, NORTH

TODAY = date(2025, 6, 30)
MODEL = load_model(REPO_ROOT / "demo" / "model")


def _slots(question: str, *bindings: dict[str, object]) -> Slots:
    return Slots(understand(question, TODAY, use_llm=False), AggregateContext.of({"bindings": list(bindings)}), MODEL)


def _run_until(slots: Slots, last: str) -> Slots:
    for name, fill in PASSES:
        fill(slots)
        if name == last:
            return slots
    raise AssertionError(f"no pass named {last!r}")


def test_the_passes_have_distinct_names_and_end_with_the_queries() -> None:
    names = [name for name, _ in PASSES]
    assert len(set(names)) == len(names)
    assert names[0] == "measures" and names[-1] == "queries"


def test_each_pass_fills_its_slots_and_leaves_the_later_ones_empty() -> None:
    slots = _run_until(_slots("top 3 regions by GMV in 2024", GMV), "measures")
    assert slots.measures == ["order_items.gmv"] and slots.cubes == ["order_items"]
    assert slots.dimensions == [] and slots.queries == []
    _run_until(slots, "mentioned")
    assert slots.dimensions == ["regions.name_en"] and slots.queries == []
    _run_until(slots, "queries")
    assert slots.queries[0]["limit"] == 3 and slots.queries[0]["order"] == [["order_items.gmv", "desc"]]


def test_compared_values_become_a_dimension_before_the_filters_are_made() -> None:
    slots = _slots("compare GMV of 华东 and 华北 in 2024", GMV, EAST, NORTH)
    _run_until(slots, "values")
    assert slots.values == {"regions.region_code": ["east", "north"]}
    _run_until(slots, "compared")
    assert slots.dimensions and slots.dimensions[0].startswith("regions.")


def test_fill_slots_is_the_passes_run_in_order() -> None:
    question, bindings = "GMV share by region in 2024", (GMV,)
    slots = _slots(question, *bindings)
    for _, fill in PASSES:
        fill(slots)
    expected = fill_slots(understand(question, TODAY, use_llm=False), {"bindings": list(bindings)}, MODEL)
    assert slots.draft() == expected and expected.post == ["share"]
