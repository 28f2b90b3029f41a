"""Aggregate path in LLM mode (DSPy against the in-test stub) executed on the real built-in compiler:
the LLM query, once corrected, returns the same numbers as the fast slot filling."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import pytest
from pydantic import SecretStr

from cube_models.backends import get_backend
from cube_models.model import load_model
from cubesage_core.settings import REPO_ROOT, Settings
from router.aggregate import run_aggregate
from router.understanding import understand
from tests.llm_stub import dspy_reply, openai_stub

pytestmark = pytest.mark.integration
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
            "term_id": "region",
            "canonical_term": "region",
            "mapped_asset_type": "dimension",
            "mapped_asset_id": "dimension:regions.name_en",
        },
    ]
}
QUERY = {
    "measures": ["order_items.gmv"],
    "dimensions": ["regions.name_en"],
    "timeDimensions": [{"dimension": "orders.order_ts", "dateRange": ["2025-04-01", "2025-06-30"]}],
    "order": [["order_items.gmv", "desc"]],
}


def test_llm_query_with_one_correction_matches_fast_mode(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    backend = get_backend(Settings(database_url=SecretStr(pg_url)), pg_url, MODEL)
    u = understand("GMV by region this quarter", TODAY, use_llm=False)
    fast = run_aggregate(u, CONTEXT, MODEL, backend, today=TODAY, use_llm=False)
    wrong = {**QUERY, "dimensions": ["regions.region_name"]}  # not a member: fed back once
    replies = [dspy_reply(cube_query=json.dumps(wrong)), dspy_reply(cube_query=json.dumps(QUERY))]
    with openai_stub(replies) as stub:
        settings = Settings(llm_url=stub.url, llm_model="openai/stub", llm_timeout_s=5.0)
        monkeypatch.setattr("cubesage_core.llm.get_settings", lambda: settings)
        llm = run_aggregate(u, CONTEXT, MODEL, backend, today=TODAY)
    assert llm.mode == "llm" and llm.cube_query == QUERY and len(stub.requests) == 2
    assert "regions.region_name" in json.dumps(stub.requests[1]["messages"])

    def values(rows: list[dict[str, Any]]) -> list[tuple[str, float]]:
        return [(r["regions.name_en"], round(float(r["order_items.gmv"]), 2)) for r in rows]

    assert values(llm.rows) == values(fast.rows) and len(fast.rows) == 8
