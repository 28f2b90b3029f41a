"""LLM mode of the detail path (DSPy against the in-test stub): budgeted context, placeholders only, every
entity filter used; a rejected SQL is asked again once with the reasons, then the step fails."""

from __future__ import annotations

import json

import pytest

from cube_models.model import load_model
from cubesage_core.llm import two_mode, using_settings
from cubesage_core.settings import Settings
from router.detail.entities import EntityMatch
from router.detail.llm import Probe, detail_context, llm_detail_sql
from router.detail.plan import plan_detail
from router.detail.schema import build_catalog, load_vocabulary
from router.sqlguard import GuardPolicy
from router.sqlguard.execute import QueryExecutionError
from tests.llm_stub import dspy_reply, openai_stub

SETTINGS = Settings()
DEMO = build_catalog(load_model(SETTINGS.model_dir), vocabulary=load_vocabulary(SETTINGS.detail_vocabulary))
LI = EntityMatch("dim_customer", "customer_id", 5, "Li Wei", "customer", "directory")
QUESTION = "list the refunded orders of Li Wei"
POLICY = GuardPolicy(allowed_tables=frozenset(f"warehouse.{t}" for t in DEMO.tables), default_schema="warehouse")
GOOD = (
    "SELECT o.order_id FROM warehouse.fact_order o JOIN warehouse.dim_customer c "
    "ON c.customer_id = o.customer_id WHERE c.customer_id = %(e0)s AND o.status = 'refunded' LIMIT 50"
)


def plan():
    return plan_detail(
        QUESTION, language="en", entities=[LI], time_range=None, limit=None, recalled_tables=[], catalog=DEMO
    )


def run(*replies: str, probe: Probe | None = None) -> tuple[object, list[dict]]:
    with (
        openai_stub([dspy_reply(sql=r) for r in replies]) as stub,
        using_settings(Settings(llm_url=stub.url, llm_model="openai/stub")),
    ):
        result = two_mode(
            lambda: llm_detail_sql(QUESTION, plan(), DEMO, POLICY, probe=probe), lambda: ("fast", {}), step="detail_sql"
        )
    return result, stub.requests


def test_placeholder_sql_is_accepted_with_its_params() -> None:
    result, requests = run(f"```sql\n{GOOD};\n```")
    sql, params = result.value
    assert result.mode == "llm" and sql == GOOD and params == {"e0": 5}
    prompt = requests[0]["messages"][-1]["content"]
    assert "%(e0)s" in prompt and "warehouse.fact_order(" in prompt and "warehouse.dim_customer(" in prompt


def test_the_prompt_lists_the_budgeted_tables_not_the_catalog() -> None:
    context = detail_context(plan(), DEMO, [])
    assert {"fact_order", "dim_customer"} <= set(context.tables) < set(DEMO.tables)
    assert "dim_product" not in context.tables and "warehouse.dim_product" not in context.text
    tiny = detail_context(plan(), DEMO, [], budget=1)
    assert tiny.tables == ("fact_order",)  # the target is always shown


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ("SELECT * FROM warehouse.dim_customer c WHERE c.customer_name = 'Li Wei' LIMIT 5", "inlines"),
        ("SELECT * FROM warehouse.fact_order o WHERE o.customer_id = %(e9)s LIMIT 5", "unknown placeholders"),
        ("SELECT o.order_id FROM warehouse.fact_order o WHERE o.status = 'refunded' LIMIT 5", "entity filter %(e0)s"),
        ("SELECT p.product_id FROM warehouse.dim_product p WHERE p.product_id = %(e0)s LIMIT 5", "tables not listed"),
        (
            "SELECT o.order_id, o.margin_secret FROM warehouse.fact_order o WHERE o.customer_id = %(e0)s LIMIT 5",
            "columns not listed: ['margin_secret']",
        ),
        ("DELETE FROM warehouse.fact_order", "SqlGuardError"),
    ],
)
def test_a_rejected_sql_is_asked_again_once_with_the_reason(bad: str, reason: str) -> None:
    result, requests = run(bad, GOOD)
    assert result.mode == "llm" and result.value[0] == GOOD and len(requests) == 2
    assert reason in requests[1]["messages"][-1]["content"]


def test_twice_rejected_sql_falls_back_to_the_template() -> None:
    unused = "SELECT o.order_id FROM warehouse.fact_order o LIMIT 5"
    result, requests = run(unused, unused)
    assert result.value == ("fast", {}) and len(requests) == 2
    assert result.label.startswith("fast (llm error: ValueError: the LLM SQL was rejected twice")
    assert json.dumps(requests[0]).count("%(e0)s") >= 1


def test_aliases_the_sql_defines_are_no_unlisted_columns() -> None:
    counted = (
        "SELECT o.status, COUNT(*) AS n FROM warehouse.fact_order o WHERE o.customer_id = %(e0)s "
        "GROUP BY o.status ORDER BY n DESC LIMIT 5"
    )
    result, requests = run(counted)
    assert result.mode == "llm" and result.value[0] == counted and len(requests) == 1


def test_sql_the_warehouse_refuses_is_asked_again_with_its_error() -> None:
    ran: list[str] = []

    def probe(sql: str, params: dict) -> None:
        ran.append(sql)
        if len(ran) == 1:
            raise QueryExecutionError("warehouse query failed: operator does not exist: bigint = text")

    first = GOOD.replace("c.customer_id = %(e0)s", "c.customer_id = %(e0)s AND o.order_id = o.status")
    result, requests = run(first, GOOD, probe=probe)
    assert result.mode == "llm" and result.value[0] == GOOD and ran == [first, GOOD]
    assert (
        "the warehouse refused the SQL: warehouse query failed: operator does not exist"
        in (requests[1]["messages"][-1]["content"])
    )


def test_sql_the_warehouse_refuses_twice_falls_back() -> None:
    def probe(sql: str, params: dict) -> None:
        raise QueryExecutionError("warehouse query failed: canceling statement due to statement timeout")

    result, requests = run(GOOD, GOOD, probe=probe)
    assert result.value == ("fast", {}) and len(requests) == 2 and "statement timeout" in result.label


def test_a_with_of_its_own_over_listed_tables_is_accepted_and_over_others_is_not() -> None:
    own = (
        "WITH recent AS (SELECT o.order_id, o.customer_id FROM warehouse.fact_order o) "
        "SELECT r.order_id FROM recent r WHERE r.customer_id = %(e0)s LIMIT 5"
    )
    result, requests = run(own)
    assert result.mode == "llm" and result.value[0] == own and len(requests) == 1
    hidden = own.replace("warehouse.fact_order o", "warehouse.dim_product o")
    result, requests = run(hidden, GOOD)
    assert len(requests) == 2 and "tables not listed: ['dim_product']" in requests[1]["messages"][-1]["content"]
