"""The detail path plans with the fused (RAG-Fusion) four-engine context, not SAG's table recall alone."""

from __future__ import annotations

from datetime import date
from typing import Any

from cube_models.model import load_model
from cubesage_core.settings import Settings
from fourengine.budget import build_context
from fourengine.crag import assess
from fourengine.fusion import fuse
from fourengine.models import Asset, JoinPlan, RankedAsset, RetrievalResult
from fourengine.settings import RetrievalSettings
from router.components import Components
from router.detail import DetailEnv, EntityDirectory
from router.detail.context import CONTEXT_EVIDENCE, context_tables, detail_context
from router.detail.schema import build_catalog
from router.intent import IntentDecision
from router.pipeline import Pipeline
from router.sqlguard import GuardPolicy
from router.understanding import understand

CATALOG = build_catalog(load_model(Settings().model_dir))
SETTINGS = RetrievalSettings()


def _retrieval(question: str, ids: list[str]) -> RetrievalResult:
    assets = [
        RankedAsset(Asset(i, i.split(":")[0], i.split(":")[1]), 0.9 - n / 10, sources={"V"}) for n, i in enumerate(ids)
    ]
    return RetrievalResult(
        question,
        [question],
        assets,
        [],
        [],
        JoinPlan(),
        assess(0.5, 0, SETTINGS),
        build_context(assets, [], [], JoinPlan(), SETTINGS),
        {},
    )


def test_the_context_tables_are_the_catalog_tables_of_its_assets_in_rank_order() -> None:
    ranked = _retrieval(
        "q", ["metric:refunds.refund_amount", "table:customers", "dimension:refunds.reason", "table:not_in_the_model"]
    )
    assert context_tables(ranked, CATALOG) == ["fact_refund", "dim_customer"]


def test_tables_only_a_sub_query_found_join_sags_recall_and_say_so() -> None:
    main = _retrieval("main", ["table:customers"])
    fused = fuse(main, [_retrieval("sub", ["table:refunds"])], SETTINGS)
    got = detail_context([("dim_customer", "Customers wiki", 0.7)], fused, CATALOG)
    assert got.source == "fused" and got.added == ["fact_refund"]
    assert got.recalled == [
        ("dim_customer", "Customers wiki", 0.7),
        ("fact_refund", CONTEXT_EVIDENCE, got.recalled[1][2]),
    ]
    assert detail_context([], main, CATALOG).source == "main"
    assert detail_context([("dim_customer", "w", 0.7)], None, CATALOG).to_dict()["source"] == "sag"


def _pipeline(context: RetrievalResult) -> Pipeline:
    def retrieve(u: Any, subs: list[Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        return {"result": context, "context": context}, []

    parts = Components(
        understand=lambda q, today, use_llm=None: understand(q, today),
        decompose=lambda u, use_llm=None: [u.normalized],
        retrieve=retrieve,
        recall_tables=lambda q, rows=None: [],
        recall_rows=lambda q: [],
        signals=lambda u, r, e, t: None,
        classify_intent=lambda u, s, use_llm=None: IntentDecision("detail", 0.9, ["fake"]),
        aggregate=lambda *a, **k: None,
    )
    env = DetailEnv(
        directory=EntityDirectory({}), policy=GuardPolicy(frozenset({"warehouse.fact_refund"})), warehouse=CATALOG
    )
    return Pipeline(parts, env)


def test_the_detail_path_answers_from_the_fused_context_when_sag_recalls_nothing() -> None:
    fused = fuse(_retrieval("main", []), [_retrieval("sub", ["table:refunds"])], SETTINGS)
    result = _pipeline(fused).run("Which table should I look in?", conn=None, today=date(2025, 6, 30))
    assert result.error is None and result.detail is not None
    assert result.detail.plan["kind"] == "table_lookup" and result.detail.rows[0][0] == "fact_refund"
    assert result.detail.plan["context"] == {
        "source": "fused",
        "context_tables": ["fact_refund"],
        "added": ["fact_refund"],
        "recalled": ["fact_refund"],
    }
