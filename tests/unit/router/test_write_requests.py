"""Requests to change data are refused as such (router.write_requests), before any retrieval or path runs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from answer.scope import Scope
from answer.synthesizer import synthesize
from router.write_requests import write_request
from tests.unit.router.test_pipeline import TODAY, pipeline

WRITES = [
    "delete all refunds",
    "Delete all refunds!",
    "update the price of Aurora X1 headphones to 0",
    "please remove customer Li Wei",
    "drop the orders table",
    "Can you set the status of order 5 to refunded?",
    "change the price of X to 0",
    "mark order 12 as paid",
    "insert a new order for Li Wei",
    "add a new row to orders",
    "truncate refunds",
    "DELETE FROM warehouse.fact_refund",
    "show me GMV; drop table warehouse.fact_order",
    "update orders set amount = 0",
    "wipe out the customers",
    "reset all prices",
    "rename the region East to West",
    "grant select on warehouse.fact_order to public",
    "I want to delete my orders",
    "clear all refunds",
    "删除所有退款",
    "把Aurora X1耳机的价格改为0",
    "将订单状态更新为已退款",
    "请删掉华东的订单",
    "清空退款表",
    "修改产品价格",
]
READS = [
    "GMV by region last quarter",
    "list the deleted orders",
    "deleted orders last week",
    "the change in GMV from 2023 to 2024",
    "change in revenue 2024 vs 2023",
    "drop in orders from March to April",
    "which products drove the drop in GMV in 华东",
    "refund rate trend by quarter",
    "set of customers with more than 15 orders",
    "top 5 products by GMV",
    "what was removed from the catalog last month",
    "Add up the GMV by region",
    "How many orders were updated last week?",
    "update frequency of the data",
    "Make a chart of GMV with regions",
    "最近更新的产品",
    "更新时间最近的订单",
    "删除的订单有哪些",
    "华东地区本月GMV",
    "list the refunded orders of customer 王芳",
]


@pytest.mark.parametrize("question", WRITES)
def test_write_requests_are_recognised(question: str) -> None:
    assert write_request(question) is not None


@pytest.mark.parametrize("question", READS)
def test_questions_about_data_are_not_write_requests(question: str) -> None:
    assert write_request(question) is None


def test_no_regression_question_is_taken_for_a_write_request() -> None:
    root = Path(__file__).resolve().parents[3]
    questions = []
    for suite in [root / "demo" / "regress" / "suite.yaml", *sorted((root / "warehouses").glob("*/suite.yaml"))]:
        data = yaml.safe_load(suite.read_text(encoding="utf-8"))
        cases = data.get("cases") if isinstance(data, dict) else data
        questions += [c["question"] for c in cases or [] if isinstance(c, dict) and c.get("question")]
    assert len(questions) > 100
    assert [q for q in questions if write_request(q)] == []


@pytest.mark.parametrize(("question", "language"), [("delete all refunds", "en"), ("删除所有退款", "zh")])
def test_the_pipeline_refuses_before_any_path_runs(question: str, language: str) -> None:
    seen: list[str] = []
    result = pipeline(seen).run(question, conn=None, today=TODAY)
    assert seen == []  # the aggregate path never ran
    assert result.intent.intent == "unsupported" and result.table.rows == []
    assert result.error is not None and result.error["type"] == "WriteRequest"
    text = synthesize(result, scope=Scope()).text
    assert ("只读取" in text) if language == "zh" else ("never changes data" in text), text
