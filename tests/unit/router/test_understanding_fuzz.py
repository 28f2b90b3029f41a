"""Random questions (fixed seed) never crash understanding, intent, decomposition or slot filling:
the only errors are the typed ``QuestionError`` and ``AggregateError``."""

from __future__ import annotations

import random
import string
from datetime import date

from cube_models.model import load_model
from cubesage_core.settings import REPO_ROOT
from router.aggregate import AggregateError, build_cube_query
from router.decompose import decompose
from router.intent import IntentSignals, classify_intent
from router.understanding import QuestionError, understand

ALPHABET = (
    string.printable
    + "华东北南本月去年同期前十名的和与对比按各最高低"
    + "趋势环比同比季度年月日天周"
    + "\u200b\U0001f600\x00\u3000"
)
WORDS = [
    "top",
    "5",
    "by",
    "region",
    "vs",
    "last",
    "year",
    "between",
    "and",
    "2024",
    "Q1",
    "March",
    "最近",
    "30",
    "天",
    "前",
    "10",
    "GMV",
    "compare",
    "their",
    "show",
    "2024-02-30",
    "9999",
    "0",
    "13月",
    "第五季度",
    "Q5",
    "last 0 days",
    "最近0天",
    "前0名",
    "between 2024-05-01 and 2024-01-01",
    "'; drop table x; --",
    "按",
    "地区",
    "同比",
]
CONTEXT = {
    "bindings": [
        {
            "term_id": "gmv",
            "canonical_term": "GMV",
            "mapped_asset_type": "metric",
            "mapped_asset_id": "metric:order_items.gmv",
        }
    ]
}


def test_random_questions_fail_only_with_typed_errors() -> None:
    model = load_model(REPO_ROOT / "demo" / "model")
    rng = random.Random(7)
    understood = 0
    for i in range(800):
        if i % 2:
            question = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 60)))
        else:
            question = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12)))
        try:
            u = understand(question, date(2025, 6, 30), use_llm=False)
        except QuestionError as err:
            assert err.message
            continue
        understood += 1
        assert classify_intent(u, IntentSignals(), use_llm=False).intent
        assert decompose(u, use_llm=False)
        try:
            draft = build_cube_query(u, CONTEXT, model, use_llm=False)
        except AggregateError:
            continue
        assert draft.query["measures"] == ["order_items.gmv"]
        for query in draft.queries:
            for td in query.get("timeDimensions", []):
                start, end = td.get("dateRange", ["0", "1"])
                assert start <= end
    assert understood > 400
