"""LLM mode end to end against the in-test OpenAI-compatible stub: DSPy steps answer or fall back."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from typing import Any

import pytest
from pydantic import SecretStr

from cubesage_core.settings import Settings, get_settings
from tests.llm_stub import dspy_reply, openai_stub

pytestmark = pytest.mark.integration
DETAIL_SQL = (
    "SELECT o.order_id, o.status FROM warehouse.fact_order o JOIN warehouse.dim_customer c "
    "ON c.customer_id = o.customer_id WHERE c.customer_id = %(e0)s AND o.status = 'refunded' LIMIT 20"
)


def _reply(request: dict[str, Any]) -> str:
    """The detail SQL step gets SQL; every other DSPy step gets a reply it cannot parse (-> fast mode)."""
    text = json.dumps(request.get("messages", []), ensure_ascii=False)
    if "[[ ## sql ## ]]" in text and "%(e0)s" in text:
        return dspy_reply(sql=DETAIL_SQL)
    return "no idea"


@pytest.fixture
def llm_service(demo_ready: Any, pg_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    from answer.service import Cubesage

    with openai_stub(_reply) as stub:
        monkeypatch.setenv("CUBESAGE_LLM_URL", stub.url)
        monkeypatch.setenv("CUBESAGE_LLM_MODEL", "openai/stub")
        get_settings.cache_clear()
        with Cubesage(Settings(database_url=SecretStr(pg_url)), url=pg_url) as svc:
            yield svc, stub
    get_settings.cache_clear()


def test_detail_sql_from_the_llm_is_guarded_and_run(llm_service: Any) -> None:
    svc, stub = llm_service
    answer = svc.ask("list the refunded orders of customer Li Wei", today=date(2025, 6, 30), mode="llm").to_dict()
    prov = answer["provenance"]
    assert answer["intent"] == "detail" and prov["detail_mode"] == "llm"
    assert "%(e0)s" in prov["sql"][-1] and prov["sql"][-1].endswith("LIMIT 20")
    assert answer["table"]["rows"] and all(row[1] == "refunded" for row in answer["table"]["rows"])
    assert prov["answer_mode"] == "fast" and prov["answer_fallback_reason"]  # "no idea" is not an answer
    assert len(stub.requests) >= 2


def test_fast_mode_makes_no_llm_calls(llm_service: Any) -> None:
    svc, stub = llm_service
    before = len(stub.requests)
    answer = svc.ask("list the refunded orders of customer Li Wei", today=date(2025, 6, 30), mode="fast").to_dict()
    assert answer["provenance"]["detail_mode"] == "fast" and len(stub.requests) == before
