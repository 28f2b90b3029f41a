"""LLM mode of the detail path (DSPy against the in-test stub): placeholders only, else refused."""

from __future__ import annotations

import pytest

from cube_models.model import load_model
from cubesage_core.settings import Settings
from router.detail.entities import EntityMatch
from router.detail.llm import llm_detail_sql
from router.detail.schema import build_catalog, load_vocabulary
from tests.llm_stub import dspy_reply, openai_stub

SETTINGS = Settings()
DEMO = build_catalog(load_model(SETTINGS.model_dir), vocabulary=load_vocabulary(SETTINGS.detail_vocabulary))
LI = EntityMatch("dim_customer", "customer_id", 5, "Li Wei", "customer", "directory")


def run(reply: str) -> tuple[str, dict]:
    import dspy

    with openai_stub([dspy_reply(sql=reply)]) as stub:
        lm = dspy.LM("openai/stub", api_base=stub.url, api_key="x", cache=False, num_retries=0)
        with dspy.context(lm=lm):
            out = llm_detail_sql("list the refunded orders of Li Wei", [LI], DEMO)
        prompt = str(stub.requests[0])
    assert "%(e0)s" in prompt and "warehouse.fact_order" in prompt
    return out


def test_placeholder_sql_is_accepted_with_its_params() -> None:
    sql, params = run("```sql\nSELECT o.order_id FROM warehouse.fact_order o JOIN warehouse.dim_customer c "
                      "ON c.customer_id = o.customer_id WHERE c.customer_id = %(e0)s AND o.status = 'refunded' "
                      "LIMIT 50;\n```")
    assert sql.startswith("SELECT") and not sql.endswith(";") and params == {"e0": 5}


def test_inlined_entity_value_is_refused() -> None:
    with pytest.raises(ValueError, match="inlines"):
        run("SELECT * FROM warehouse.dim_customer c WHERE c.customer_name = 'Li Wei'")


def test_unknown_placeholder_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown placeholders"):
        run("SELECT * FROM warehouse.dim_customer c WHERE c.customer_id = %(e9)s")
