"""CRAG's corrective helpers and the RAG-Fusion of retrieval results (no database)."""

from __future__ import annotations

from fourengine.budget import build_context
from fourengine.crag import assess, conclude, missing_terms, rewrite
from fourengine.fusion import fuse
from fourengine.models import Asset, FewShot, JoinPlan, RankedAsset, RetrievalResult, TermBinding, TermHit
from fourengine.passages import Passage, table_assets
from fourengine.settings import RetrievalSettings


def _hit(term: str, matched: str, asset: Asset | None = None) -> TermHit:
    return TermHit(term, term, matched, "trigram", 0.7, "metric", "metric:t.m", asset=asset)


def test_high_grade_skips_corrective_work_and_low_grade_waits_for_it() -> None:
    s = RetrievalSettings()
    assert "skip:corrective" in assess(0.9, 1, s).actions and assess(0.9, 1, s).decision == "use"
    low = assess(0.1, 0, s)
    assert low.actions == [] and low.decision == "corrective"


def test_still_low_after_correction_is_insufficient_and_names_what_is_missing() -> None:
    s = RetrievalSettings()
    crag = assess(0.1, 0, s)
    conclude(crag, 0.2, 0, s, ["blorp"])
    assert (crag.grade_after, crag.decision, crag.missing) == ("low", "insufficient", ["blorp"])
    crag = assess(0.1, 0, s)
    conclude(crag, 0.2, 1, s, [])
    assert crag.grade_after == "medium" and crag.decision == "corrected" and crag.final == "medium"


def test_rewrite_adds_the_names_of_loosely_matched_terms() -> None:
    hits = [_hit("gross merchandise value", "merch", Asset("metric:t.m", "metric", "t.m", "Revenue"))]
    assert rewrite("merch by month", hits) == "merch by month (gross merchandise value, Revenue)"
    assert rewrite("merch by month", []) == "merch by month"


def test_missing_terms_are_question_words_no_term_matched() -> None:
    terms = ["blorp", "month", "by", "blorp month"]
    assert missing_terms(terms, [_hit("m", "month")], "blorp by month") == ["blorp"]


def test_passages_map_physical_tables_to_table_assets() -> None:
    tables = {"table:orders": Asset("table:orders", "table", "orders", meta={"sql_table": "shop.fact_order"})}
    found = table_assets([Passage("shop.fact_order", 2.0, "Orders"), Passage("other.x", 1.0)], tables)
    assert [(p.title, a.asset_id) for p, a in found] == [("Orders", "table:orders")]


def _result(question: str, ids: list[str], bindings: list[TermBinding]) -> RetrievalResult:
    assets = [RankedAsset(Asset(i, "table", i.split(":")[1]), 1.0 - n / 10, sources={"V"}) for n, i in enumerate(ids)]
    s = RetrievalSettings()
    shots = [FewShot(len(question), question, {"measures": ["t.m"]}, None, 0.8, False)]
    return RetrievalResult(
        question,
        [question],
        assets,
        bindings,
        shots,
        JoinPlan(),
        assess(0.5, len(bindings), s),
        build_context(assets, bindings, shots, JoinPlan(), s),
        {},
    )


def test_fusion_feeds_every_sub_query_into_one_budgeted_context() -> None:
    b_main = TermBinding("gmv", "GMV", "metric", "metric:a.gmv")
    main = _result("GMV and refunds", ["table:a", "table:b"], [b_main])
    sub = _result("refunds", ["table:c", "table:a"], [TermBinding("refund", "refund", "table", "table:c")])
    sub.assets[0].sources = {"R"}
    fused = fuse(main, [sub], RetrievalSettings())
    assert [a.asset.asset_id for a in fused.assets][:1] == ["table:a"]  # in both lists
    assert {"table:a", "table:b", "table:c"} <= set(fused.context.included)
    assert [b.term_id for b in fused.term_bindings] == ["gmv", "refund"]
    assert fused.crag is main.crag and "fusion" in fused.timings_ms
    assert len(fused.few_shots) == 2 and "table:c" in fused.context.text
    assert fuse(main, [], RetrievalSettings()) is main


def test_engine_contributions_count_only_what_the_context_renders() -> None:
    from bench.engines import contributions

    result = _result("GMV", ["table:a", "table:b"], [])
    result.assets[1].sources = {"G"}
    result.context.included = ["table:a", "few_shot:3"]
    assert contributions(result) == {"V", "D"}  # table:b (from G) was not rendered
    result.context.included = ["table:b"]
    assert contributions(result) == {"G"}


def test_missing_words_inside_a_longer_missing_word_are_not_repeated() -> None:
    terms = ["写一首", "一首关于春天", "关于春天", "写一首关于"]
    assert missing_terms(terms, [], "帮我写一首关于春天的诗") == ["一首关于春天", "写一首关于"]
