"""SAG store unreachable (no fallback): aggregate questions still answered, detail ones raise StoreUnavailable."""

from __future__ import annotations

import dataclasses

import pytest

from router.detail import DetailEnv, EntityDirectory
from router.intent import IntentDecision
from router.pipeline import Pipeline
from router.sqlguard import GuardPolicy
from sag_index.errors import StoreUnavailable
from tests.unit.router.test_pipeline import TODAY, components


class ConnectionError_(Exception):
    """Named like elastic_transport.ConnectionError (raised by the ES client when the node is gone)."""


ConnectionError_.__name__ = "ConnectionError"


def _down(question: str, rows: list | None = None) -> list:
    raise ConnectionError_("Connection refused")


def _pipeline(intent: str) -> Pipeline:
    c = dataclasses.replace(
        components([]),
        recall_rows=_down,
        recall_tables=_down,
        classify_intent=lambda u, s, use_llm=None: IntentDecision(intent, 0.9, ["fake"]),
    )
    env = DetailEnv(directory=EntityDirectory({}), policy=GuardPolicy(frozenset({"warehouse.fact_order"})))
    return Pipeline(c, env)


def test_aggregate_questions_survive_a_dead_sag_store() -> None:
    result = _pipeline("aggregate").run("GMV by region this year", conn=None, today=TODAY)
    assert result.table.rows == [["East China", 12.5]] and result.error is None


def test_detail_questions_get_a_clear_store_unavailable() -> None:
    with pytest.raises(StoreUnavailable, match="unreachable"):
        _pipeline("detail").run("list the orders of Li Wei", conn=None, today=TODAY)


def test_other_recall_errors_are_not_swallowed() -> None:
    def broken(question: str) -> list:
        raise KeyError("bug")

    c = dataclasses.replace(components([]), recall_rows=broken)
    env = DetailEnv(directory=EntityDirectory({}), policy=GuardPolicy(frozenset({"warehouse.fact_order"})))
    with pytest.raises(KeyError):
        Pipeline(c, env).run("GMV by region this year", conn=None, today=TODAY)
