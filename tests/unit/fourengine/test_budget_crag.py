"""Token budget allocation/pruning/rendering and the CRAG grade."""

import pytest

from cubesage_core.tokens import count_tokens
from fourengine.budget import BudgetError, _allocate, build_context
from fourengine.crag import assess
from fourengine.models import Asset, FewShot, JoinPlan, RankedAsset, TermBinding
from fourengine.settings import BUDGET_SHARES, RetrievalSettings


def _assets(n: int, kind: str = "table") -> list[RankedAsset]:
    return [
        RankedAsset(Asset(f"{kind}:t{i}", kind, f"t{i}", f"Title {i}", "word " * 30), 1.0 - i / 100) for i in range(n)
    ]


def _shots(n: int) -> list[FewShot]:
    return [FewShot(i, f"question {i}", {"measures": [f"c.m{i}"]}, None, 0.9 - i / 100, False) for i in range(n)]


def test_allocation_follows_the_shares_when_every_category_is_hungry() -> None:
    need = {c: 10_000 for c in BUDGET_SHARES}
    alloc = _allocate(1000, BUDGET_SHARES, need)
    assert alloc == {
        "tables": 300,
        "columns": 250,
        "metrics": 150,
        "few_shots": 100,
        "join_rules": 100,
        "business_rules": 100,
    }


def test_unused_budget_flows_to_the_other_categories() -> None:
    need = {c: 0 for c in BUDGET_SHARES} | {"tables": 10_000, "metrics": 40}
    alloc = _allocate(1000, BUDGET_SHARES, need)
    assert alloc["metrics"] == 40 and alloc["tables"] >= 950 and alloc["columns"] == 0


def test_context_respects_the_budget_and_keeps_bound_assets_first() -> None:
    assets = _assets(40)
    assets[-1].bound = True  # the weakest by score, but bound
    settings = RetrievalSettings(token_budget=300)
    ctx = build_context(assets, [], [], JoinPlan(), settings)
    assert sum(ctx.tokens.values()) <= 300 + 6  # section separators
    assert "t39 (Title 39) [bound]" in ctx.text
    assert ctx.dropped["tables"] > 0


def test_few_shot_count_depends_on_complexity() -> None:
    settings = RetrievalSettings(token_budget=20_000)
    counts = {
        c: build_context([], [], _shots(8), JoinPlan(), settings, c).text.count("Q: ")
        for c in ("simple", "medium", "complex")
    }
    assert counts == {"simple": 2, "medium": 4, "complex": 6}


def test_bindings_are_rendered_as_constraints_with_filter_values() -> None:
    binding = TermBinding("region_east", "华东", "dimension", "dimension:regions.region_code", "east")
    ctx = build_context([], [binding], [], JoinPlan(), RetrievalSettings())
    assert "'华东' MUST use dimension:regions.region_code = 'east'" in ctx.text
    assert ctx.tokens["business_rules"] == count_tokens(ctx.text)


def test_bad_budget_configuration_is_a_typed_error() -> None:
    with pytest.raises(BudgetError):
        build_context([], [], [], JoinPlan(), RetrievalSettings(budget_shares={"tables": 1.0}))
    with pytest.raises(BudgetError):
        build_context([], [], [], JoinPlan(), RetrievalSettings(), complexity="huge")


@pytest.mark.parametrize(
    ("top", "bindings", "grade"),
    [
        (0.85, 1, "high"),
        (0.85, 0, "medium"),
        (0.7, 2, "medium"),
        (0.5, 1, "medium"),
        (0.5, 0, "low"),
        (0.64, 0, "low"),
        (0.66, 0, "medium"),
    ],
)
def test_crag_grades_follow_the_seed_thresholds(top: float, bindings: int, grade: str) -> None:
    result = assess(top, bindings, RetrievalSettings())
    assert result.grade == grade
    assert (result.actions == []) == (grade == "low")  # low: actions are filled by corrective retrieval
