"""Bad input never touches the warehouse: empty/overlong questions, injections, unknown tables, writes."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date
from typing import Any

import psycopg
import pytest
from pydantic import SecretStr

from cubesage_core import db
from cubesage_core.settings import Settings
from router.sqlguard import GuardedSql
from router.sqlguard.execute import QueryExecutionError, run_readonly
from router.understanding.types import QuestionError

pytestmark = pytest.mark.integration
TODAY = date(2025, 6, 30)


def _counts(url: str) -> tuple[int, int]:
    with db.connection(url) as conn:
        orders = conn.execute("SELECT count(*) FROM warehouse.fact_order").fetchone()[0]
        tables = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'warehouse'"
        ).fetchone()[0]
    return orders, tables


@pytest.fixture(scope="module")
def service(demo_ready: Any, pg_url: str) -> Iterator[Any]:
    from answer.service import Cubesage

    with Cubesage(Settings(database_url=SecretStr(pg_url)), url=pg_url) as svc:
        yield svc


@pytest.mark.parametrize("question", ["", "   ", "x" * 5000])
def test_empty_and_overlong_questions_are_refused(service: Any, question: str) -> None:
    with pytest.raises(QuestionError):
        service.ask(question, today=TODAY)


@pytest.mark.parametrize(
    "question",
    [
        "list orders; drop table fact_order",
        "show orders of customer '; DELETE FROM warehouse.fact_order; --",
        "列出订单; truncate warehouse.fact_refund",
        "show refunds where 1=1; update warehouse.fact_order set status='x'",
    ],
)
def test_injection_attempts_leave_the_warehouse_untouched(service: Any, pg_url: str, question: str) -> None:
    before = _counts(pg_url)
    answer = service.ask(question, today=TODAY, mode="fast").to_dict()
    assert answer["text"]
    for sql in answer["provenance"].get("sql") or []:
        assert "drop" not in sql.lower() and "delete" not in sql.lower() and "truncate" not in sql.lower()
    assert _counts(pg_url) == before


def test_unknown_table_gets_a_clear_answer(service: Any, pg_url: str) -> None:
    before = _counts(pg_url)
    answer = service.ask("show all rows of the employee_salaries table", today=TODAY, mode="fast").to_dict()
    assert answer["intent"] in ("unsupported", "clarify") or not answer["table"]["rows"]
    assert "employee_salaries" not in " ".join(answer["provenance"].get("sql") or [])
    assert _counts(pg_url) == before


def test_detail_answer_is_bound_and_guarded(service: Any) -> None:
    answer = service.ask("list the refunded orders of customer Li Wei", today=TODAY, mode="fast").to_dict()
    assert answer["intent"] == "detail"
    sql = answer["provenance"]["sql"][-1]
    assert "Li Wei" not in sql and re.search(r"%\(p|\$\d", sql) and "LIMIT" in sql  # values are bound
    assert answer["table"]["rows"] and all("refunded" in row for row in answer["table"]["rows"])


def test_query_log_records_each_answer(service: Any, pg_url: str) -> None:
    answer = service.ask("王芳最近的订单", today=TODAY, mode="fast")
    with db.connection(pg_url) as conn:
        row = conn.execute(
            "SELECT question, intent, executed_sql FROM semlayer.query_log WHERE query_id = %s", (answer.query_id,)
        ).fetchone()
    assert row[0] == "王芳最近的订单" and row[1] == answer.intent and row[2]


def test_executor_is_read_only_under_the_reader_role(pg_url: str) -> None:
    before = _counts(pg_url)
    with db.connection(pg_url) as conn:
        with pytest.raises(QueryExecutionError, match="read-only"):
            run_readonly(conn, GuardedSql("DELETE FROM warehouse.fact_order", ("warehouse.fact_order",), 0))
        with pytest.raises(QueryExecutionError, match="permission denied"):
            run_readonly(conn, GuardedSql("SELECT * FROM semlayer.query_log LIMIT 1", ("semlayer.query_log",), 1))
        with pytest.raises(QueryExecutionError, match="statement timeout"):
            run_readonly(conn, GuardedSql("SELECT pg_sleep(2)", (), 0), timeout_ms=100)
        assert conn.execute("SELECT current_user").fetchone()[0] != "cubesage_reader"
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    assert _counts(pg_url) == before
