"""Aggregate path, LLM mode (DSPy against the in-test stub): constrained members, one re-ask, fallbacks."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import pytest

from cube_models.backends.base import LoadResult
from cube_models.model import load_model
from cubesage_core.settings import REPO_ROOT
from router.aggregate import build_cube_query, run_aggregate
from router.understanding import understand
from tests.llm_stub import dspy_reply
from tests.unit.router._llm_mode import llm_mode

TODAY = date(2025, 6, 30)
MODEL = load_model(REPO_ROOT / "demo" / "model")
CONTEXT = {
    "bindings": [
        {
            "term_id": "gmv",
            "canonical_term": "GMV",
            "mapped_asset_type": "metric",
            "mapped_asset_id": "metric:order_items.gmv",
        },
        {
            "term_id": "region_east",
            "canonical_term": "华东",
            "mapped_asset_type": "dimension",
            "mapped_asset_id": "dimension:regions.region_code",
            "filter_value": "east",
        },
    ],
    "assets": [{"id": "dimension:regions.name_en", "type": "dimension", "name": "name_en", "score": 0.8}],
    "few_shots": [
        {
            "question": "GMV by region this quarter",
            "cube_query": {"measures": ["order_items.gmv"], "dimensions": ["regions.name_en"]},
        }
    ],
    "context_text": "RULE: regional metrics use the order's region",
}
GOOD = {
    "measures": ["order_items.gmv"],
    "filters": [{"member": "regions.region_code", "operator": "equals", "values": ["east"]}],
    "timeDimensions": [{"dimension": "orders.order_ts", "dateRange": ["2024-03-01", "2024-03-31"]}],
}
QUESTION = "What was GMV in East China in March 2024?"


def reply(query: dict[str, Any] | str) -> str:
    return dspy_reply(cube_query=query if isinstance(query, str) else json.dumps(query))


def question() -> Any:
    return understand(QUESTION, TODAY, use_llm=False)


def test_valid_reply_is_used_and_prompt_lists_only_retrieved_members(monkeypatch: pytest.MonkeyPatch) -> None:
    with llm_mode(monkeypatch, [reply(GOOD)]) as stub:
        draft = build_cube_query(question(), CONTEXT, MODEL)
    assert draft.mode == "llm" and draft.query == GOOD
    prompt = json.dumps(stub.requests[0]["messages"], ensure_ascii=False)
    assert "order_items.gmv" in prompt and "orders.order_ts" in prompt and "regions.region_code" in prompt
    assert "payments.method" not in prompt and "2024-03-01" in prompt and "GMV by region this quarter" in prompt
    assert "RULE: regional metrics use the order's region" in prompt


def test_member_outside_the_retrieval_is_fed_back_once(monkeypatch: pytest.MonkeyPatch) -> None:
    bad = {**GOOD, "dimensions": ["payments.method"]}
    with llm_mode(monkeypatch, [reply(bad), reply(GOOD)]) as stub:
        draft = build_cube_query(question(), CONTEXT, MODEL)
    assert draft.mode == "llm" and draft.query == GOOD and len(stub.requests) == 2
    assert "payments.method" in json.dumps(stub.requests[1]["messages"]) and "rejected" in draft.notes[0]


def test_unused_bound_metric_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    other = {**GOOD, "measures": ["regions.count"]}
    with llm_mode(monkeypatch, [reply(other), reply(GOOD)]) as stub:
        draft = build_cube_query(question(), CONTEXT, MODEL)
    assert draft.query == GOOD and "must be used" in json.dumps(stub.requests[1]["messages"])


def test_two_invalid_replies_fall_back_to_fast_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    with llm_mode(monkeypatch, [reply("not json at all")]):
        draft = build_cube_query(question(), CONTEXT, MODEL)
    assert draft.mode == "fast" and "invalid twice" in (draft.fallback_reason or "")
    assert draft.query == GOOD  # the fast slot filling gives the same query


def test_comparison_periods_are_applied_to_the_llm_query(monkeypatch: pytest.MonkeyPatch) -> None:
    yoy = {
        "measures": ["order_items.gmv"],
        "timeDimensions": [{"dimension": "orders.order_ts", "dateRange": ["2025-01-01", "2025-06-30"]}],
    }
    context = {"bindings": CONTEXT["bindings"][:1]}
    with llm_mode(monkeypatch, [reply(yoy)]):
        draft = build_cube_query(understand("今年GMV同比去年同期", TODAY, use_llm=False), context, MODEL)
    assert draft.mode == "llm" and draft.comparison == "yoy"
    assert [q["timeDimensions"][0]["dateRange"] for q in draft.queries] == [
        ["2025-01-01", "2025-06-30"],
        ["2024-01-01", "2024-06-30"],
    ]


class FlakyBackend:
    def __init__(self) -> None:
        self.queries: list[dict[str, Any]] = []

    def load(self, query: dict[str, Any], today: date | None = None) -> LoadResult:
        self.queries.append(query)
        if len(self.queries) == 1:
            raise RuntimeError("Cube 400: could not resolve a join path for regions.name_en")
        return LoadResult(rows=[{"order_items.gmv": 42.0}], sql="SELECT ...", backend="fake")


def test_execution_error_re_asks_the_llm_with_the_error(monkeypatch: pytest.MonkeyPatch) -> None:
    first = {**GOOD, "dimensions": ["regions.name_en"]}
    backend = FlakyBackend()
    with llm_mode(monkeypatch, [reply(first), reply(GOOD)]) as stub:
        result = run_aggregate(question(), CONTEXT, MODEL, backend, today=TODAY)
    assert result.mode == "llm" and result.retries == 1 and result.rows == [{"order_items.gmv": 42.0}]
    assert backend.queries == [first, GOOD]
    assert "could not resolve a join path" in json.dumps(stub.requests[1]["messages"])


class JoinlessBackend:
    """Refuses every query grouping by region name (as Cube does without a join path), runs the others."""

    def __init__(self) -> None:
        self.queries: list[dict[str, Any]] = []

    def load(self, query: dict[str, Any], today: date | None = None) -> LoadResult:
        self.queries.append(query)
        if "regions.name_en" in query.get("dimensions", []):
            raise RuntimeError("Cube 400: could not resolve a join path for regions.name_en")
        return LoadResult(rows=[{"order_items.gmv": 42.0}], sql="SELECT ...", backend="fake")


def test_a_query_failing_after_its_correction_falls_back_to_fast_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    """The LLM's query fails, the re-asked one fails too: the fast draft answers, the fallback is recorded."""
    from cubesage_core.llm import question_budget
    from cubesage_core.settings import Settings

    grouped = {**GOOD, "dimensions": ["regions.name_en"]}
    backend = JoinlessBackend()
    with llm_mode(monkeypatch, [reply(grouped)]) as stub, question_budget(Settings(llm_url=stub.url)) as budget:
        result = run_aggregate(question(), CONTEXT, MODEL, backend, today=TODAY)
    assert result.mode == "fast" and result.rows == [{"order_items.gmv": 42.0}] and result.cube_query == GOOD
    assert backend.queries == [grouped, grouped, GOOD] and len(stub.requests) == 2
    assert "failed after one correction" in (result.fallback_reason or "")
    assert [s.step for s in budget.steps] == ["cube_query", "cube_query_fix", "cube_query"]
    assert budget.steps[-1].mode.startswith("fast (llm error: the LLM's Cube query failed after one correction")


def test_a_query_leaving_out_the_named_rows_is_asked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    named = {"member": "customers.customer_name", "operator": "equals", "values": ["Li Wei"]}
    context = {**CONTEXT, "filters": [named]}
    filtered = {**GOOD, "filters": [*GOOD["filters"], named]}
    with llm_mode(monkeypatch, [reply(GOOD), reply(filtered)]) as stub:
        draft = build_cube_query(question(), context, MODEL)
    assert draft.mode == "llm" and draft.query == filtered and len(stub.requests) == 2
    assert "named rows -> " in json.dumps(stub.requests[0]["messages"], ensure_ascii=False)
    assert "the named rows must filter the query" in stub.requests[1]["messages"][-1]["content"]


def test_named_rows_left_out_twice_fall_back_to_fast_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    named = {"member": "customers.customer_name", "operator": "equals", "values": ["Li Wei"]}
    with llm_mode(monkeypatch, [reply(GOOD)]) as stub:
        draft = build_cube_query(question(), {**CONTEXT, "filters": [named]}, MODEL)
    assert draft.mode == "fast" and named in draft.query["filters"] and len(stub.requests) == 2
    assert "the named rows must filter the query" in (draft.fallback_reason or "")


def test_a_reply_that_is_not_a_typed_cube_query_is_asked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    extra = {**GOOD, "having": "gmv > 10"}  # not a key of the typed query
    with llm_mode(monkeypatch, [reply(extra), reply(GOOD)]) as stub:
        draft = build_cube_query(question(), CONTEXT, MODEL)
    assert draft.mode == "llm" and draft.query == GOOD
    assert "did not parse as a Cube query" in stub.requests[1]["messages"][-1]["content"]


def test_shares_are_part_of_the_typed_reply(monkeypatch: pytest.MonkeyPatch) -> None:
    base = {"measures": ["order_items.gmv"], "dimensions": ["regions.name_en"]}
    whole = {**GOOD, "share": "of_whole", "part": ["regions.region_code"]}
    total = {**base, "share": "of_total", "keep": {"regions.name_en": ["East China"]}}
    context = {**CONTEXT, "assets": [*CONTEXT["assets"]]}
    with llm_mode(monkeypatch, [reply(whole), reply(total)]):
        part = build_cube_query(question(), context, MODEL)
        shares = build_cube_query(understand("GMV share by region", TODAY, use_llm=False), context, MODEL)
    assert part.mode == "llm" and part.post == ["part"] and part.queries[0] == GOOD
    assert part.queries[1] == {k: v for k, v in GOOD.items() if k != "filters"}  # the whole drops the part
    assert shares.post == ["share"] and shares.keep == {"regions.name_en": ["East China"]} and shares.query == base


@pytest.mark.parametrize(("complexity", "shown"), [("simple", 2), ("medium", 4)])
def test_the_prompt_shows_the_few_shots_the_budget_kept(
    monkeypatch: pytest.MonkeyPatch, complexity: str, shown: int
) -> None:
    """The question's complexity caps the budget's few-shots; the Cube-query prompt's examples and allowed
    members follow the budgeted context, not every few-shot retrieval found."""
    from dataclasses import asdict

    from fourengine.budget import build_context
    from fourengine.models import FewShot, JoinPlan
    from fourengine.settings import RetrievalSettings

    shots = [
        FewShot(
            i,
            f"approved question {i}",
            {"measures": ["order_items.gmv"], "dimensions": [dim]},
            None,
            0.9 - i / 100,
            False,
        )
        for i, dim in enumerate(
            [
                "regions.name_en",
                "regions.region_code",
                "orders.status",
                "orders.channel",
                "payments.method",
                "products.category",
            ]
        )
    ]
    block = build_context([], [], shots, JoinPlan(), RetrievalSettings(token_budget=20_000), complexity)
    context = {**CONTEXT, "few_shots": [asdict(s) for s in shots], "context": asdict(block)}
    with llm_mode(monkeypatch, [reply(GOOD)]) as stub:
        draft = build_cube_query(question(), context, MODEL)
    prompt = stub.requests[0]["messages"][-1]["content"]
    examples = prompt.split("[[ ## examples ## ]]", 1)[1].split("[[ ## ", 1)[0]
    assert draft.mode == "llm" and [i for i in range(6) if f"approved question {i} ->" in examples] == list(
        range(shown)
    )
    members = prompt.split("[[ ## members ## ]]", 1)[1].split("[[ ## ", 1)[0]
    assert "payments.method" not in members and "products.category" not in members


def _budgeted(budget: int) -> tuple[dict[str, Any], list[str]]:
    """CONTEXT with nine retrieved assets budgeted at ``budget`` tokens, and the asset ids the budget rendered."""
    from dataclasses import asdict

    from fourengine.budget import build_context
    from fourengine.models import Asset, JoinPlan, RankedAsset
    from fourengine.settings import RetrievalSettings

    ids = [
        "metric:payments.total_amount",
        "dimension:payments.method",
        "metric:products.avg_list_price",
        "dimension:products.category",
        "dimension:products.brand",
        "metric:customers.new_customers",
        "dimension:customers.segment",
        "dimension:customers.city",
        "metric:payments.avg_amount",
    ]
    ranked = [
        RankedAsset(Asset(i, i.split(":")[0], i.split(":")[1], description="a retrieved member " * 3), 0.9 - n / 100)
        for n, i in enumerate(ids)
    ]
    block = build_context(ranked, [], [], JoinPlan(), RetrievalSettings(token_budget=budget), "simple")
    context = {**CONTEXT, "assets": [r.to_dict() for r in ranked], "few_shots": [], "context": asdict(block)}
    return context, block.included


def _listed(monkeypatch: pytest.MonkeyPatch, context: dict[str, Any]) -> list[str]:
    """The members the Cube-query prompt lists for ``context``."""
    with llm_mode(monkeypatch, [reply(GOOD)]) as stub:
        draft = build_cube_query(question(), context, MODEL)
    assert draft.mode == "llm" and draft.query == GOOD
    members = stub.requests[0]["messages"][-1]["content"].split("[[ ## members ## ]]", 1)[1].split("[[ ## ", 1)[0]
    return [line.split(" ", 1)[0] for line in members.strip().splitlines()]


def test_the_prompt_lists_the_members_the_budget_rendered(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tight token budget renders fewer retrieved members, and the Cube-query prompt lists only those; the
    members the question's bindings name (and their time dimension) are listed whatever the budget kept."""
    wide, everything = _budgeted(20_000)
    tight, kept = _budgeted(60)
    assert len(everything) == 9 and 0 < len(kept) < 9
    listed_wide, listed_tight = _listed(monkeypatch, wide), _listed(monkeypatch, tight)
    dropped = [i.split(":", 1)[1] for i in everything if i not in kept]
    assert all(i.split(":", 1)[1] in listed_tight for i in kept)
    assert not [m for m in dropped if m in listed_tight] and all(m in listed_wide for m in dropped)
    assert {"order_items.gmv", "regions.region_code", "orders.order_ts"} <= set(listed_tight)
    assert len(listed_tight) < len(listed_wide)
