"""A list of columns closing a question (router.parse.passes.tail, router.parse.column_items): it asks for
rows, its words name columns (of the listed cube first, then of the cubes its rows refer to), and it never
turns an aggregate question into a listing."""

from __future__ import annotations

from pathlib import Path

import pytest

from cube_models.model import load_model
from router.parse import Knowledge, build_lexicon
from tests.unit.router.test_parse import Values, read

MODEL = """
cubes:
  - name: orders
    title: Orders
    sql_table: shop.orders
    joins:
      - {name: customers, relationship: many_to_one, sql: "{CUBE}.customer_id = {customers}.customer_id"}
      - {name: lines, relationship: one_to_many, sql: "{CUBE}.order_id = {lines}.order_id"}
    dimensions:
      - {name: order_id, sql: order_id, type: number, primary_key: true, title: Order number}
      - {name: customer_id, sql: customer_id, type: number, title: Customer id}
      - {name: priority, sql: priority, type: string, title: Order priority}
      - {name: ship_priority, sql: ship_priority, type: string, title: Shipping priority}
      - {name: total, sql: total, type: number, title: Order total price}
      - {name: ordered_at, sql: ordered_at, type: time, title: Order date}
    measures:
      - {name: count, type: count, title: Number of orders}
      - {name: revenue, type: sum, sql: total, title: Revenue}
  - name: customers
    title: Customers
    sql_table: shop.customers
    dimensions:
      - {name: customer_id, sql: customer_id, type: number, primary_key: true}
      - {name: name, sql: name, type: string, title: Customer name}
      - {name: city, sql: city, type: string, title: City}
      - {name: balance, sql: balance, type: number, title: Account balance, meta: {synonyms: [账户余额]}}
      - {name: age, sql: age, type: number, title: Customer age (years)}
      - {name: signup_year, sql: signup_year, type: number, title: Year signed up}
      - {name: engine, sql: engine, type: string, title: Engine}
    measures:
      - {name: count, type: count, title: Number of customers}
  - name: lines
    title: Order lines
    sql_table: shop.lines
    joins:
      - {name: orders, relationship: many_to_one, sql: "{CUBE}.order_id = {orders}.order_id"}
    dimensions:
      - {name: line_id, sql: line_id, type: number, primary_key: true, title: Line id}
      - {name: order_id, sql: order_id, type: number, title: Order id}
      - {name: quantity, sql: quantity, type: number, title: Quantity}
      - {name: code, sql: code, type: string, title: Line code}
    measures:
      - {name: count, type: count, title: Number of order lines}
"""


@pytest.fixture(scope="module")
def knowledge(tmp_path_factory: pytest.TempPathFactory) -> Knowledge:
    folder: Path = tmp_path_factory.mktemp("model")
    (folder / "shop.yml").write_text(MODEL, encoding="utf-8")
    model = load_model(folder)
    values = Values({"paris": [("customers.city", "Paris")], "turbo-prop": [("customers.engine", "Turbo-prop")]})
    return Knowledge(model, build_lexicon(model, [], values))


def test_a_closing_list_of_columns_asks_for_rows_with_those_columns(knowledge: Knowledge) -> None:
    r = read(knowledge, "which customers are in Paris? name, city and account balance")
    assert r.intent == "detail" and r.listing == "customers" and not r.unknown
    assert {"customers.name", "customers.city", "customers.balance"} <= set(r.columns)


def test_a_word_names_the_column_whose_other_words_are_the_cubes_own(knowledge: Knowledge) -> None:
    r = read(knowledge, "list the orders placed in 2024: order number, priority, total")
    assert r.listing == "orders" and not r.unknown
    assert "orders.priority" in r.columns and "orders.ship_priority" not in r.columns
    assert "orders.total" in r.columns and not r.measures  # "total" is a column here, not a sum


def test_a_columns_unit_in_parentheses_is_not_its_name(knowledge: Knowledge) -> None:
    r = read(knowledge, "customers in Paris - name, year, balance")
    assert "customers.signup_year" in r.columns and "customers.age" not in r.columns and not r.unknown


def test_columns_come_from_the_rows_the_listed_rows_refer_to(knowledge: Knowledge) -> None:
    r = read(knowledge, "list the order lines of 2024: quantity, order priority and city")
    assert r.listing == "lines" and not r.unknown
    assert {"lines.quantity", "orders.priority", "customers.city"} <= set(r.columns)


def test_chinese_column_words_by_part_of_a_name_or_by_translation(knowledge: Knowledge) -> None:
    r = read(knowledge, "列出巴黎的客户：名称、余额")
    assert r.listing == "customers" and "customers.balance" in r.columns and "customers.name" in r.columns


def test_an_aggregate_with_a_closing_list_stays_an_aggregate(knowledge: Knowledge) -> None:
    r = read(knowledge, "top 5 customers by revenue: name and city")
    assert r.intent == "aggregate" and r.measures == ["orders.revenue"] and not r.column_list
    assert read(knowledge, "how many orders in 2024 - and which customers placed them?").column_list == []


def test_a_listed_row_without_a_label_shows_its_code(knowledge: Knowledge) -> None:
    r = read(knowledge, "list the order lines of 2024: quantity and order priority")
    assert "lines.code" in r.columns


def test_a_plural_of_a_value_written_as_one_word_names_it(knowledge: Knowledge) -> None:
    r = read(knowledge, "customers with turboprops: name and city")
    assert [(f.member, f.values) for f in r.filters] == [("customers.engine", ["Turbo-prop"])]


def test_a_column_on_file_is_filled_in(knowledge: Knowledge) -> None:
    r = read(knowledge, "which customers have a balance on file? name and balance, highest first")
    assert ("customers.balance", "set") in [(f.member, f.operator) for f in r.filters]
    assert r.order == [("customers.balance", "desc")]


def test_non_is_a_negation_that_is_refused_when_nothing_applies_it(knowledge: Knowledge) -> None:
    r = read(knowledge, "non-Paris customers: name and city")
    assert r.refusal is not None and "non" in r.refusal


def test_priciest_ranks_by_the_price(knowledge: Knowledge) -> None:
    r = read(knowledge, "the 3 priciest orders of 2024")
    assert (r.intent, r.order, r.limit) == ("detail", [("orders.total", "desc")], 3)


def test_the_one_date_a_list_asks_for_is_the_one_its_period_is_on(knowledge: Knowledge) -> None:
    r = read(knowledge, "customers of 2024 - name and signup year")  # a number column, no date: none taken
    assert r.time_dimension is None
    lone = read(knowledge, "list the orders of 2024: order number and order date")
    assert lone.time_dimension == "orders.ordered_at"
