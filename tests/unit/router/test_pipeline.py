"""Pipeline orchestration with small fakes: stage order, follow-ups, timings, path errors kept as answers."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any

from cube_models.model import SemanticModel
from router.aggregate import AggregateError
from router.components import Components
from router.detail import DetailEnv, EntityDirectory
from router.intent import IntentDecision
from router.pipeline import Pipeline, Turn, _with_context
from router.sqlguard import GuardPolicy
from router.understanding import understand

TODAY = date(2025, 6, 30)


@dataclass
class FakeAggregate:
    cube_query: dict[str, Any]
    rows: list[dict[str, Any]]
    sql: str = "SELECT 1"
    backend: str = "fake"
    problems: list[Any] = field(default_factory=list)


def components(seen: list[str], fail: bool = False, follow_ups: list[Any] | None = None) -> Components:
    def aggregate(
        u: Any, retrieval: dict[str, Any], today: date, use_llm: bool | None, follow_up: Any = None
    ) -> FakeAggregate:
        seen.append(u.normalized)
        if follow_ups is not None:
            follow_ups.append(follow_up)
        if fail:
            raise AggregateError("no measure found for this question")
        return FakeAggregate(
            {"measures": ["order_items.gmv"]}, [{"regions.name_en": "East China", "order_items.gmv": "12.5"}]
        )

    return Components(
        understand=lambda q, today, use_llm=None: understand(q, today),
        decompose=lambda u, use_llm=None: [u.normalized],
        retrieve=lambda u, subs: ({"result": None}, [{"id": "metric:order_items.gmv", "score": 0.1}]),
        recall_tables=lambda q, rows=None: [],
        recall_rows=lambda q: [],
        signals=lambda u, r, e, t: None,
        classify_intent=lambda u, s, use_llm=None: IntentDecision("aggregate", 0.9, ["fake"]),
        aggregate=aggregate,
        model=lambda: SemanticModel({}),
    )


def pipeline(seen: list[str], fail: bool = False) -> Pipeline:
    env = DetailEnv(directory=EntityDirectory({}), policy=GuardPolicy(frozenset({"warehouse.fact_order"})))
    return Pipeline(components(seen, fail), env)


def test_aggregate_run_emits_stages_in_order_and_times_them() -> None:
    stages: list[str] = []
    seen: list[str] = []
    result = pipeline(seen).run(
        "GMV by region this year", conn=None, today=TODAY, on_stage=lambda name, payload: stages.append(name)
    )
    assert stages == ["intent", "retrieval", "plan", "rows"]
    assert result.table.rows == [["East China", 12.5]]
    assert {"understand", "retrieval", "intent", "aggregate", "total"} <= set(result.timings_ms)
    assert result.turn is not None and result.turn.cube_query == {"measures": ["order_items.gmv"]}


def test_follow_up_reads_with_the_previous_question() -> None:
    seen: list[str] = []
    previous = Turn(question="GMV by region this year", intent="aggregate")
    result = pipeline(seen).run("and by channel?", conn=None, today=TODAY, previous=previous)
    assert seen == ["GMV by region this year and by channel?"]
    assert result.follow_up_of == "GMV by region this year"


def test_an_aggregate_follow_up_edits_the_previous_cube_query() -> None:
    follow_ups: list[Any] = []
    env = DetailEnv(directory=EntityDirectory({}), policy=GuardPolicy(frozenset({"warehouse.fact_order"})))
    previous = Turn(
        question="GMV by region this year",
        intent="aggregate",
        cube_query={"measures": ["order_items.gmv"], "dimensions": ["regions.name_en"]},
    )
    Pipeline(components([], follow_ups=follow_ups), env).run("and in 2024?", conn=None, today=TODAY, previous=previous)
    edit = follow_ups[0]
    assert edit.previous == previous.cube_query and edit.understanding.normalized == "and in 2024?"
    assert [r.label for r in edit.understanding.time_ranges] == ["2024"]
    follow_ups.clear()  # no previous Cube query (e.g. a detail turn): nothing to edit
    Pipeline(components([], follow_ups=follow_ups), env).run(
        "and in 2024?", conn=None, today=TODAY, previous=Turn(question="GMV by region this year", intent="detail")
    )
    assert follow_ups == [None]


def test_follow_up_detection() -> None:
    prev = Turn(question="GMV by region this year", intent="aggregate")
    assert _with_context("只看华东", prev)[1] == prev.question
    assert _with_context("按渠道呢？", prev)[1] == prev.question
    assert _with_context("top 3 only", prev)[1] == prev.question
    assert _with_context("What was the refund rate in 2024?", prev) == ("What was the refund rate in 2024?", None)
    assert _with_context("and by channel?", None) == ("and by channel?", None)


def test_path_error_is_kept_as_an_answer_with_the_classified_intent() -> None:
    result = pipeline([], fail=True).run("GMV by region this year", conn=None, today=TODAY)
    assert result.intent.intent == "aggregate"
    assert result.error == {"type": "AggregateError", "message": "no measure found for this question"}
    assert result.table.rows == []


def test_an_aggregate_crag_found_insufficient_is_refused_naming_what_is_missing() -> None:
    from dataclasses import replace as with_

    from fourengine.models import CragResult

    @dataclass
    class Retrieved:
        crag: CragResult

    env = DetailEnv(directory=EntityDirectory({}), policy=GuardPolicy(frozenset({"warehouse.fact_order"})))

    def run(decision: str) -> tuple[Any, list[str]]:
        seen: list[str] = []
        found = Retrieved(CragResult("low", 0.1, 0, decision=decision, missing=["blorp"]))
        parts = with_(components(seen), retrieve=lambda u, subs: ({"result": found}, []))
        return Pipeline(parts, env).run("blorp of x", conn=None, today=TODAY), seen

    refused, seen = run("insufficient")
    assert refused.intent.intent == "unsupported" and seen == []  # no guessed query ran
    assert "crag: insufficient: nothing matches blorp" in refused.intent.reasons
    corrected, seen = run("corrected")
    assert corrected.intent.intent == "aggregate" and seen == ["blorp of x"]


def test_a_mixed_rows_part_with_words_the_model_cannot_place_is_refused_not_listed_without_them() -> None:
    from dataclasses import replace

    from router.parse import Reading

    def parse(u: Any, entities: Any = ()) -> Reading:
        return Reading(u.normalized, u.language, u.today, intent="detail", listing="orders", unknown=["shipped"])

    base = components([])
    mixed = replace(
        base, classify_intent=lambda u, s, use_llm=None: IntentDecision("mixed", 0.9, ["fake"]), parse=parse
    )
    env = DetailEnv(directory=EntityDirectory({}), policy=GuardPolicy(frozenset({"warehouse.fact_order"})))
    result = Pipeline(mixed, env).run(
        "GMV by region this year, and list the orders shipped", conn=None, today=TODAY, use_llm=False
    )
    assert result.detail is None and result.table.rows == [["East China", 12.5]]
    assert [p["code"] for p in result.problems] == ["detail_failed"] and "shipped" in result.problems[0]["message"]


def test_a_mixed_rows_part_read_as_a_total_is_refused_not_listed_without_its_words() -> None:
    from dataclasses import replace

    from router.parse import Reading

    def parse(u: Any, entities: Any = ()) -> Reading:
        return Reading(u.normalized, u.language, u.today, intent="aggregate", measures=["orders.count"])

    base = components([])
    mixed = replace(
        base, classify_intent=lambda u, s, use_llm=None: IntentDecision("mixed", 0.9, ["fake"]), parse=parse
    )
    env = DetailEnv(directory=EntityDirectory({}), policy=GuardPolicy(frozenset({"warehouse.fact_order"})))
    result = Pipeline(mixed, env).run(
        "GMV by region this year, and which of its orders sold that year?", conn=None, today=TODAY, use_llm=False
    )
    assert result.detail is None and result.table.rows == [["East China", 12.5]]
    assert [p["code"] for p in result.problems] == ["detail_failed"] and "total" in result.problems[0]["message"]
