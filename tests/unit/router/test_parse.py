"""The fast parser (router.parse) on a small hand-written shop model: what each pass reads, and what it
refuses. No database: values and glossary terms are given directly."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import pytest

from cube_models.model import SemanticModel, load_model
from router.parse import Knowledge, build_lexicon, parse
from router.parse.cube import aggregate_draft, listing_query
from router.parse.reading import Reading, Target
from router.parse.verdict import judge
from router.understanding import understand

TODAY = date(2024, 12, 31)
MODEL = """
cubes:
  - name: orders
    title: Orders
    sql_table: shop.orders
    joins:
      - {name: customers, relationship: many_to_one, sql: "{CUBE}.customer_id = {customers}.customer_id"}
    dimensions:
      - {name: order_id, sql: order_id, type: number, primary_key: true, title: Order number}
      - {name: customer_id, sql: customer_id, type: number, title: Customer id}
      - {name: status, sql: status, type: string, title: Order status}
      - {name: total, sql: total, type: number, title: Order total}
      - {name: discount, sql: discount, type: number, title: Discount, format: percent}
      - {name: ordered_at, sql: ordered_at, type: time, title: Order date}
      - {name: shipped_at, sql: shipped_at, type: time, title: Ship date}
    measures:
      - {name: count, type: count, title: Number of orders}
      - {name: revenue, type: sum, sql: total, title: Revenue, meta: {synonyms: [sales]}}
      - {name: avg_total, type: avg, sql: total, title: Average order value}
      - {name: max_total, type: max, sql: total, title: Largest order}
      - {name: buyers, type: count_distinct, sql: customer_id, title: Ordering customers}
      - name: late_count
        type: count
        title: Late orders
        filters: [{sql: "{CUBE}.shipped_at > {CUBE}.ordered_at + interval '7 days'"}]
      - {name: late_ratio, type: number, sql: "1.0 * {late_count} / NULLIF({count}, 0)", title: Delay ratio}
      - {name: on_time_ratio, type: number, sql: "1.0 - 1.0 * {late_count} / NULLIF({count}, 0)", title: Punctuality}
    segments:
      - {name: late, sql: "{CUBE}.shipped_at > {CUBE}.ordered_at + interval '7 days'", title: Late}
  - name: customers
    title: Customers
    sql_table: shop.customers
    joins:
      - {name: nations, relationship: many_to_one, sql: "{CUBE}.nation_id = {nations}.nation_id"}
    dimensions:
      - {name: customer_id, sql: customer_id, type: number, primary_key: true}
      - {name: name, sql: name, type: string, title: Customer name}
      - {name: segment, sql: segment, type: string, title: Market segment}
      - {name: balance, sql: balance, type: number, title: Account balance}
      - {name: nation_id, sql: nation_id, type: number}
    measures:
      - {name: count, type: count, title: Number of customers}
      - {name: total_balance, type: sum, sql: balance, title: Total account balance}
      - {name: key_count, type: count, title: Builders, filters: [{sql: "{CUBE}.segment = 'BUILDING'"}]}
    segments:
      - {name: key_accounts, sql: "{CUBE}.segment = 'BUILDING'", title: Builders}
  - name: order_lines
    title: Order items
    sql_table: shop.order_lines
    joins:
      - {name: orders, relationship: many_to_one, sql: "{CUBE}.order_id = {orders}.order_id"}
    dimensions:
      - {name: line_id, sql: line_id, type: number, primary_key: true, title: Line id}
      - {name: order_id, sql: order_id, type: number, title: Order id}
      - {name: quantity, sql: quantity, type: number, title: Quantity}
      - {name: amount, sql: amount, type: number}
    measures:
      - {name: count, type: count, title: Number of order items}
      - {name: paid_value, type: sum, sql: amount, title: Paid value, filters: [{sql: "{CUBE}.quantity > 0"}]}
  - name: gifts
    title: Gifts
    sql_table: shop.gifts
    dimensions:
      - {name: gift_id, sql: gift_id, type: number, primary_key: true}
      - {name: price, sql: price, type: number, title: Unit price}
    measures:
      - {name: top_price, type: max, sql: price, title: Highest unit price}
      - {name: low_price, type: min, sql: price, title: Lowest unit price}
  - name: nations
    title: Nations
    sql_table: shop.nations
    dimensions:
      - {name: nation_id, sql: nation_id, type: number, primary_key: true}
      - {name: name, sql: name, type: string, title: Nation, meta: {synonyms: [country]}}
      - {name: founded, sql: founded, type: number, title: Year founded}
    measures:
      - {name: count, type: count, title: Number of nations}
    segments:
      - {name: old, sql: "{CUBE}.founded < 1900", title: Old nations}
"""


@dataclass
class Values:
    surfaces: dict[str, list[tuple[str, str]]] = field(default_factory=dict)


@pytest.fixture(scope="module")
def knowledge(tmp_path_factory: pytest.TempPathFactory) -> Knowledge:
    folder: Path = tmp_path_factory.mktemp("model")
    (folder / "shop.yml").write_text(MODEL, encoding="utf-8")
    model = load_model(folder)
    values = Values(
        {
            "germany": [("nations.name", "GERMANY")],
            "france": [("nations.name", "FRANCE")],
            "building": [("customers.segment", "BUILDING")],
            "big ones": [("customers.segment", "Big Ones")],
            "cancelled": [("orders.status", "cancelled")],
            "on": [("orders.status", "ON")],
        }
    )
    return Knowledge(model, build_lexicon(model, [], values))


def read(knowledge: Knowledge, question: str) -> Reading:
    return parse(understand(question, TODAY), knowledge)


def test_a_measure_by_a_dimension_qualified_by_its_cube(knowledge: Knowledge) -> None:
    r = read(knowledge, "revenue by customer country in 2024")
    assert (r.intent, r.measures, r.dimensions) == ("aggregate", ["orders.revenue"], ["nations.name"])
    assert not r.unknown and judge(r).answers


def test_group_bys_joined_by_and(knowledge: Knowledge) -> None:
    r = read(knowledge, "sales by market segment and country")
    assert r.dimensions == ["customers.segment", "nations.name"]


def test_average_uses_the_avg_measure_and_a_missing_one_is_refused(knowledge: Knowledge) -> None:
    assert read(knowledge, "average order total").measures == ["orders.avg_total"]
    refused = read(knowledge, "average account balance")
    assert refused.refusal and "average" in refused.refusal and not judge(refused).answers


def test_counting_a_cube_and_its_distinct_count_through_another(knowledge: Knowledge) -> None:
    assert read(knowledge, "how many customers are there").measures == ["customers.count"]
    assert read(knowledge, "how many distinct customers placed orders in 2024").measures == ["orders.buyers"]


def test_which_with_a_superlative_keeps_one_row(knowledge: Knowledge) -> None:
    r = read(knowledge, "which country has the highest revenue?")
    assert r.dimensions == ["nations.name"] and r.order == [("orders.revenue", "desc")] and r.limit == 1


def test_values_filter_and_two_values_compared_are_grouped(knowledge: Knowledge) -> None:
    r = read(knowledge, "revenue from German customers")
    assert [(f.member, f.values) for f in r.filters] == [("nations.name", ["GERMANY"])]
    both = read(knowledge, "revenue in Germany vs France")
    assert "nations.name" in both.dimensions


def test_a_count_bound_groups_the_rows_named_before_it(knowledge: Knowledge) -> None:
    r = read(knowledge, "customers with more than 5 orders")
    assert r.measures == ["orders.count"] and r.dimensions == ["customers.name"]
    assert [(f.member, f.operator, f.values) for f in r.filters] == [("orders.count", "gt", ["5"])]


def test_listing_with_bounds_signs_order_and_limit(knowledge: Knowledge) -> None:
    r = read(knowledge, "list the BUILDING customers with a negative account balance")
    assert r.intent == "detail" and r.listing == "customers"
    assert ("customers.balance", "lt", ["0"]) in [(f.member, f.operator, f.values) for f in r.filters]
    top = read(knowledge, "the 3 largest orders in 2024")
    assert (top.intent, top.limit, top.order) == ("detail", 3, [("orders.total", "desc")])
    query = listing_query(top, understand("the 3 largest orders in 2024", TODAY), knowledge.model)
    assert query["limit"] == 3 and query["timeDimensions"][0]["dateRange"] == ["2024-01-01", "2024-12-31"]


def test_a_row_named_by_its_key(knowledge: Knowledge) -> None:
    r = read(knowledge, "show order 42")
    assert r.listing == "orders" and [(f.member, f.values) for f in r.filters] == [("orders.order_id", ["42"])]


def test_a_verb_picks_the_time_dimension(knowledge: Knowledge) -> None:
    r = read(knowledge, "number of orders shipped in March 2024")
    assert r.time_dimension == "orders.shipped_at"
    draft = aggregate_draft(r, understand("number of orders shipped in March 2024", TODAY), knowledge.model)
    assert draft.query["timeDimensions"] == [
        {"dimension": "orders.shipped_at", "dateRange": ["2024-03-01", "2024-03-31"]}
    ]


def test_a_period_on_something_the_model_does_not_date_is_refused(knowledge: Knowledge) -> None:
    r = read(knowledge, "number of nations in 2024")
    assert r.refusal and "no date" in r.refusal


def test_unknown_words_and_negations_are_refused(knowledge: Knowledge) -> None:
    unknown = read(knowledge, "NPS by country")
    assert "NPS" in unknown.unknown and not judge(unknown).answers
    never = read(knowledge, "customers who never placed an order")
    assert never.refusal and "never" in never.refusal


def test_a_language_word_spelled_like_a_value_is_no_value(knowledge: Knowledge) -> None:
    r = read(knowledge, "revenue of orders on 2024-03-05")
    assert not any(t.value == "ON" for m in r.mentions for t in m.targets)


def test_a_share_of_a_segment_is_the_part_over_the_whole(knowledge: Knowledge) -> None:
    question = "what share of orders were late in 2024"
    r = read(knowledge, question)
    draft = aggregate_draft(r, understand(question, TODAY), knowledge.model)
    assert r.share and draft.post == ["part"] and len(draft.queries) == 2
    assert draft.queries[0].get("segments") == ["orders.late"] and "segments" not in draft.queries[1]


def test_a_percentage_before_a_column_is_its_value(knowledge: Knowledge) -> None:
    r = read(knowledge, "list the orders with a 10% discount")
    assert ("orders.discount", "equals", ["0.1"]) in [(f.member, f.operator, f.values) for f in r.filters]


def test_rows_the_pipeline_recognised_filter_by_their_target(knowledge: Knowledge) -> None:
    understanding = understand("revenue of Acme Corp", TODAY)
    r = parse(understanding, knowledge, [("Acme Corp", Target("value", "customers.name", "Acme Corp", "rows"))])
    assert [(f.member, f.values) for f in r.filters] == [("customers.name", ["Acme Corp"])]


def test_a_bound_after_its_number_and_on_a_column_named_before_it(knowledge: Knowledge) -> None:
    r = read(knowledge, "customers with 5 or more orders")
    assert [(f.member, f.operator, f.values) for f in r.filters] == [("orders.count", "gte", ["5"])]
    rows = read(knowledge, "which orders had an order total of at least 500?")
    assert (rows.intent, rows.listing, rows.measures) == ("detail", "orders", [])
    assert [(f.member, f.operator) for f in rows.filters] == [("orders.total", "gte")]


def test_a_percent_bound_on_a_column_of_fractions_is_a_fraction(knowledge: Knowledge) -> None:
    r = read(knowledge, "which orders had a discount above 10%?")
    assert [(f.member, f.operator, f.values) for f in r.filters] == [("orders.discount", "gt", ["0.1"])]
    r = read(knowledge, "which orders had an order total above 10 percent")  # not a percent column: as said
    assert [(f.member, f.values) for f in r.filters] == [("orders.total", ["10"])]


def test_chinese_tenths_are_a_percent_bound_and_any_classifier_counts() -> None:
    from router.parse.language import marks

    bounds = [(m.text, m.data) for m in marks("胜率超过五成、三成五以上的球队有几支") if m.kind == "bound"]
    assert bounds == [("超过五成", ("gt", [50.0])), ("三成五以上", ("gt", [35.0]))]
    assert [m.text for m in marks("有几支球队") if m.kind == "count"] == ["几支"]
    assert not [m for m in marks("成本超过五千") if "成" in m.text]  # cost is no tenth


def test_who_ranks_the_one_named_thing_the_rows_belong_to_else_is_refused(knowledge: Knowledge) -> None:
    r = read(knowledge, "who has the most orders?")
    assert r.measures == ["orders.count"] and r.dimensions == ["customers.name"] and r.limit == 1  # an order's
    r = read(knowledge, "who has the most nations?")  # nations belong to no one: one total would answer "who"
    assert r.dimensions == [] and "who" in r.unhonoured and not judge(r).answers


def test_a_bound_on_a_measure_over_no_group_is_refused(knowledge: Knowledge) -> None:
    r = read(knowledge, "how many customers have more than 5 orders in total, all together?")
    assert not judge(r).answers


def test_the_n_rows_ranked_by_the_column_after_a_superlative(knowledge: Knowledge) -> None:
    r = read(knowledge, "the 3 BUILDING customers with the lowest account balance")
    assert (r.intent, r.listing, r.limit, r.order) == ("detail", "customers", 3, [("customers.balance", "asc")])


def test_numbers_and_rankings_nothing_used_refuse(knowledge: Knowledge) -> None:
    assert not judge(read(knowledge, "revenue by country for 17 and 42")).answers
    unranked = read(knowledge, "top 3 customers")  # nothing says by what
    assert unranked.unhonoured == ["top 3"] and not judge(unranked).answers


def test_excluding_a_value_filters_it_out(knowledge: Knowledge) -> None:
    r = read(knowledge, "number of orders excluding cancelled ones")
    assert [(f.member, f.operator, f.values) for f in r.filters] == [("orders.status", "notEquals", ["cancelled"])]


def test_a_comparative_bounds_the_column_it_names(knowledge: Knowledge) -> None:
    r = read(knowledge, "orders with an order total higher than 100")
    assert [(f.member, f.operator, f.values) for f in r.filters] == [("orders.total", "gt", ["100"])]
    cheap = read(knowledge, "orders cheaper than 50")  # the price-like column, not the rows' amount by default
    assert [(f.member, f.operator) for f in cheap.filters] == [("orders.total", "lt")]


def _filters(r: Reading) -> list[tuple[str, str, list[str]]]:
    return [(f.member, f.operator, f.values) for f in r.filters]


def test_an_order_phrase_names_a_column_by_one_word_of_its_title(knowledge: Knowledge) -> None:
    r = read(knowledge, "list the customers in Germany, highest balance first")
    assert r.order == [("customers.balance", "desc")] and judge(r).answers


def test_a_bare_title_word_asks_for_that_column_of_the_listed_rows(knowledge: Knowledge) -> None:
    r = read(knowledge, "list the customers in Germany with their account")  # "Account balance"
    assert "customers.balance" in r.columns and not r.unknown


def test_a_money_bound_with_no_name_bounds_the_counted_cube_amount(knowledge: Knowledge) -> None:
    r = read(knowledge, "how many orders came in above $15?")
    assert ("orders.total", "gt", ["15"]) in _filters(r) and judge(r).answers
    bare = read(knowledge, "how many orders came in above 15?")
    assert not judge(bare).answers  # no currency and no name: nothing says what is bounded


def test_a_number_right_after_a_number_column_is_its_value(knowledge: Knowledge) -> None:
    r = read(knowledge, "orders with discount 0.15")
    assert ("orders.discount", "equals", ["0.15"]) in _filters(r) and not r.unknown


def test_a_bound_said_in_words_and_a_trailing_comma(knowledge: Knowledge) -> None:
    r = read(knowledge, "customers with more than three orders")
    assert ("orders.count", "gt", ["3"]) in _filters(r)
    comma = read(knowledge, "orders with an order total of at least 2,000, newest first")
    assert ("orders.total", "gte", ["2000"]) in _filters(comma)


def test_a_name_before_parentheses_holding_its_value_is_known(knowledge: Knowledge) -> None:
    r = read(knowledge, "revenue from customers in Deutschland (GERMANY)")
    assert ("nations.name", "equals", ["GERMANY"]) in _filters(r) and not r.unknown
    alone = read(knowledge, "revenue from customers in Deutschland")
    assert "Deutschland" in alone.unknown


def test_a_verb_of_an_event_beside_rows_of_things_is_a_dropped_condition(knowledge: Knowledge) -> None:
    things = read(knowledge, "how many nations have ever bought")
    assert "bought" in things.unknown and not judge(things).answers
    events = read(knowledge, "how many orders were paid in 2024")
    assert "paid" not in events.unknown


def test_the_generic_amount_word_orders_by_the_cube_amount(knowledge: Knowledge) -> None:
    r = read(knowledge, "list the orders of German customers by amount, highest first")
    assert r.order == [("orders.total", "desc")] and not r.unknown


def test_per_a_number_column_is_a_rate_not_groups(knowledge: Knowledge) -> None:
    r = read(knowledge, "revenue per discount")
    assert "orders.discount" not in r.dimensions and not judge(r).answers
    assert read(knowledge, "revenue by order status").dimensions == ["orders.status"]


def test_which_rows_have_a_bounded_measure_groups_those_rows(knowledge: Knowledge) -> None:
    r = read(knowledge, "which customers have revenue above 500?")
    assert r.dimensions == ["customers.name"] and ("orders.revenue", "gt", ["500"]) in _filters(r)
    counted = read(knowledge, "how many customers have revenue above 500?")  # the groups passing, counted
    assert (counted.counted, counted.dimensions) == ("customers.count", ["customers.customer_id"])


def test_rows_containing_a_named_value_are_filtered_by_it(knowledge: Knowledge) -> None:
    r = read(knowledge, "包含GERMANY客户的订单有哪些")
    assert ("nations.name", "equals", ["GERMANY"]) in _filters(r) and not r.unhonoured


def test_a_period_said_of_a_year_column_bounds_it(knowledge: Knowledge) -> None:
    r = read(knowledge, "revenue from customers in nations founded before 1900")
    assert _filters(r) == [("nations.founded", "lte", ["1899"])] and not r.unknown
    query = aggregate_draft(
        r, understand("revenue from customers in nations founded before 1900", TODAY), knowledge.model
    ).queries[0]
    assert "timeDimensions" not in query  # the period is no date of the orders
    dated = read(knowledge, "revenue before 2024")
    assert not dated.filters and dated.periods(understand("revenue before 2024", TODAY).time_ranges)


def test_by_after_a_participle_names_an_agent_not_a_group(knowledge: Knowledge) -> None:
    assert read(knowledge, "revenue of orders placed by BUILDING customers").dimensions == []
    assert read(knowledge, "revenue grouped by market segment").dimensions == ["customers.segment"]


def test_a_share_of_named_rows_that_have_a_property_is_within_those_rows(knowledge: Knowledge) -> None:
    r = read(knowledge, "what percentage of the GERMANY orders were late?")
    assert r.share and r.part_segments == ["orders.late"]
    assert ("nations.name", "equals", ["GERMANY"]) in _filters(r)  # the whole: the German orders


def test_a_word_for_money_asks_the_amount_of_dated_rows(knowledge: Knowledge) -> None:
    r = read(knowledge, "which market segment brought in the most money through orders in 2024?")
    assert r.measures == ["orders.revenue"] and not r.unknown
    things = read(knowledge, "which BUILDING customers have the most money?")
    assert not things.measures and not judge(things).answers  # customers are no dated rows: not guessed


def test_a_demonym_opening_the_question_names_its_place(knowledge: Knowledge) -> None:
    r = read(knowledge, "German customers with a negative account balance")
    assert ("nations.name", ["GERMANY"]) in [(f.member, f.values) for f in r.filters] and not r.unknown
    assert not any(f.member == "nations.name" for f in read(knowledge, "Average order total in 2024").filters)


def test_a_bare_event_verb_dates_by_its_time_dimension(knowledge: Knowledge) -> None:
    r = read(knowledge, "how many orders did we ship in 2024")
    assert r.time_dimension == "orders.shipped_at" and not r.unknown


def test_an_abbreviation_of_one_model_word_is_that_word(knowledge: Knowledge) -> None:
    r = read(knowledge, "list the customers with an acct balance below 0")
    assert ("customers.balance", "lt", ["0"]) in [(f.member, f.operator, f.values) for f in r.filters]
    assert not r.unknown
    assert read(knowledge, "list the customers with their qqq").unknown == ["qqq"]


def test_a_year_ending_the_sentence_is_a_period(knowledge: Knowledge) -> None:
    u = understand("How many orders did we ship in 2024.", TODAY)
    assert [t.label for t in u.time_ranges] == ["2024"]


def test_n_rows_with_a_superlative_name_order_by_its_column(knowledge: Knowledge) -> None:
    r = read(knowledge, "list the 3 orders with the largest order in 2024.")
    assert (r.intent, r.limit, r.order) == ("detail", 3, [("orders.total", "desc")]) and not r.unknown


def test_a_superlative_then_first_orders_without_ranking_out(knowledge: Knowledge) -> None:
    assert understand("which customers are in GERMANY? Highest balance first.", TODAY).ranking is None
    assert understand("which customer has the highest balance", TODAY).ranking is not None


def test_day_of_the_week_is_a_cycle_not_a_grain() -> None:
    assert understand("Which day of the week has the most orders?", TODAY).granularity is None
    assert understand("Which day had the most orders?", TODAY).granularity == "day"


def test_the_average_number_of_a_numeric_column_is_its_average(knowledge: Knowledge) -> None:
    refused = read(knowledge, "the average number of discount")  # no avg measure of it: said so, no count
    assert refused.refusal and "average of Discount" in refused.refusal
    assert read(knowledge, "the average number of orders").measures != ["orders.avg_total"]


def test_a_share_of_values_takes_the_last_named_one_as_the_part(knowledge: Knowledge) -> None:
    r = read(knowledge, "what share of GERMANY's revenue came from BUILDING customers")
    assert r.share and r.dimensions == ["customers.segment"] and r.keep == {"customers.segment": ["BUILDING"]}
    assert [(f.member, f.values) for f in r.filters] == [("nations.name", ["GERMANY"])]


@dataclass
class _Term:
    canonical_term: str
    mapped_asset_id: str
    synonyms: list[str] = field(default_factory=list)
    mapped_asset_type: str | None = None
    filter_value: str | None = None


def test_a_number_and_hao_before_a_chinese_noun_names_a_row(tmp_path: Path) -> None:
    (tmp_path / "shop.yml").write_text(MODEL, encoding="utf-8")
    model = load_model(tmp_path)
    zh = Knowledge(model, build_lexicon(model, [_Term("订单", "table:orders")], Values()))
    r = read(zh, "列出100号订单的状态")
    assert [(f.member, f.values) for f in r.filters] == [("orders.order_id", ["100"])] and r.keyed == ["orders"]


def test_how_much_with_a_verb_of_money_asks_the_measure_named_by_its_noun(knowledge: Knowledge) -> None:
    r = read(knowledge, "how much did we sell in 2024")
    assert r.measures == ["orders.revenue"] and not r.unknown


def test_a_listing_shows_a_date_it_names(knowledge: Knowledge) -> None:
    r = read(knowledge, "list the orders with their ship date")
    assert "orders.shipped_at" in r.columns and r.time_dimension is None


def test_the_rows_of_a_document_go_by_lines_and_items(knowledge: Knowledge) -> None:
    r = read(knowledge, "show the lines of order 42 with their quantity")
    assert (r.intent, r.listing) == ("detail", "order_lines") and not r.unknown
    assert [(f.member, f.values) for f in r.filters] == [("orders.order_id", ["42"])]


def test_counting_rows_whose_group_passes_a_bound_groups_by_their_key(knowledge: Knowledge) -> None:
    r = read(knowledge, "how many customers have more than 5 orders?")
    assert (r.counted, r.dimensions, r.measures) == ("orders.buyers", ["customers.customer_id"], ["orders.count"])
    query = aggregate_draft(r, understand("how many customers have more than 5 orders?", TODAY), knowledge.model).query
    assert query["total"] and query["limit"] == 1
    assert query["filters"] == [{"member": "orders.count", "operator": "gt", "values": ["5"]}]
    assert read(knowledge, "how many orders have revenue over 500?").counted == "orders.count"
    fewer = read(knowledge, "how many customers have fewer than 2 orders?")  # the ones with none would be missed
    assert fewer.refusal and not fewer.counted
    grand = read(knowledge, "total revenue over 500")  # nothing counted: no groups to count
    assert grand.refusal and not grand.counted


def test_a_chinese_bound_with_a_measure_word_counts_the_cube_before_it(tmp_path: Path) -> None:
    (tmp_path / "shop.yml").write_text(MODEL, encoding="utf-8")
    model = load_model(tmp_path)
    zh = Knowledge(
        model, build_lexicon(model, [_Term("订单", "table:orders"), _Term("客户", "table:customers")], Values())
    )
    r = read(zh, "有多少客户的订单超过5个？")
    assert [(f.member, f.operator, f.values) for f in r.filters] == [("orders.count", "gt", ["5"])]
    assert r.counted == "orders.buyers"


DURATIONS = """
cubes:
  - name: calls
    title: Calls
    sql_table: crm.calls
    dimensions:
      - {name: call_id, sql: call_id, type: number, primary_key: true}
      - {name: agent, sql: agent, type: string, title: Agent}
      - {name: topic, sql: topic, type: string, title: Topic}
    measures:
      - {name: longest, type: max, sql: duration_ms, title: Longest call (ms)}
      - {name: talk_hours, type: sum, sql: duration_ms / 3600000.0, title: Talk time (hours)}
"""


def test_a_duration_is_shown_in_the_unit_asked_and_a_group_run_stops_at_the_measure(tmp_path: Path) -> None:
    from answer.formatting import label
    from router.aggregate.derive import combine

    (tmp_path / "crm.yml").write_text(DURATIONS, encoding="utf-8")
    model = load_model(tmp_path)
    crm = Knowledge(
        model,
        build_lexicon(model, [_Term("最长", "metric:calls.longest"), _Term("话题", "dimension:calls.topic")], Values()),
    )
    r = read(crm, "longest call per agent, in minutes")
    assert r.units == {"calls.longest": "minute"} and not r.unknown and judge(r).answers
    draft = aggregate_draft(r, understand("longest call per agent, in minutes", TODAY), model)
    rows, _ = combine(draft, [[{"calls.agent": "ann", "calls.longest": "90000"}]])
    assert rows == [{"calls.agent": "ann", "calls.longest.minutes": 1.5}]
    assert label("calls.longest.minutes", "en").endswith(" (minutes)")
    assert label("calls.longest.minutes", "zh").endswith("（分钟）")
    zh = read(crm, "每个话题最长的通话是多少分钟？")
    assert zh.dimensions == ["calls.topic"] and zh.units == {"calls.longest": "minute"}
    assert read(crm, "talk time in hours by agent").units == {}  # already in hours: nothing converted


def test_rows_with_no_row_of_a_joined_cube_leave_its_key_unset(tmp_path: Path, knowledge: Knowledge) -> None:
    (tmp_path / "music.yml").write_text(
        """
cubes:
  - name: artists
    sql_table: m.artists
    joins: [{name: albums, relationship: one_to_many, sql: "{CUBE}.artist_id = {albums}.artist_id"}]
    dimensions:
      - {name: artist_id, sql: artist_id, type: number, primary_key: true}
      - {name: name, sql: name, type: string, title: Artist name}
    measures: [{name: count, type: count, title: Number of artists}]
  - name: albums
    sql_table: m.albums
    dimensions: [{name: album_id, sql: album_id, type: number, primary_key: true}]
""",
        encoding="utf-8",
    )
    model = load_model(tmp_path)
    music = Knowledge(model, build_lexicon(model, [], Values()))
    listed = read(music, "which artists don't have a single album?")
    assert (listed.listing, [(f.member, f.operator) for f in listed.filters]) == (
        "artists",
        [("albums.album_id", "notSet")],
    )
    assert "albums.album_id" not in listed.columns and judge(listed).answers
    counted = read(music, "how many artists have no albums?")
    assert counted.measures == ["artists.count"] and counted.filters[0].operator == "notSet"
    unjoined = read(knowledge, "list the customers who never placed an order")  # orders join customers only
    assert unjoined.refusal and "join from customers to orders" in unjoined.refusal


def test_an_hour_bounds_in_the_column_unit_and_a_share_of_rows_said_so_is_within_each_group(tmp_path: Path) -> None:
    (tmp_path / "crm.yml").write_text(
        """
cubes:
  - name: calls
    title: Calls
    sql_table: crm.calls
    dimensions:
      - {name: call_id, sql: call_id, type: number, primary_key: true}
      - {name: agent, sql: agent, type: string, title: Agent}
      - {name: wait, sql: wait, type: number, title: Wait time (minutes)}
    measures: [{name: count, type: count, title: Number of calls}]
""",
        encoding="utf-8",
    )
    model = load_model(tmp_path)
    crm = Knowledge(model, build_lexicon(model, [], Values()))
    q = "what percentage of calls waited more than an hour, by agent?"
    r = read(crm, q)
    assert [(f.member, f.operator, f.values) for f in r.part] == [("calls.wait", "gt", ["60"])]
    draft = aggregate_draft(r, understand(q, TODAY), model)
    assert draft.post == ["part"] and "filters" not in draft.queries[1]
    from router.aggregate.derive import combine

    rows, _ = combine(
        draft,
        [
            [{"calls.agent": "a", "calls.count": 3}, {"calls.agent": "b", "calls.count": 1}],
            [{"calls.agent": "b", "calls.count": 4}, {"calls.agent": "a", "calls.count": 6}],
        ],
    )
    assert [row["calls.count.share"] for row in rows] == [0.5, 0.25]
    across = read(crm, "share of calls by agent")  # nothing said of the rows: each group's share of the total
    assert across.share and not across.part


def test_an_order_phrase_naming_nothing_orders_by_the_column_bounded(tmp_path: Path, knowledge: Knowledge) -> None:
    assert read(knowledge, "orders over 500, highest first").order == [("orders.total", "desc")]
    (tmp_path / "crm.yml").write_text(
        """
cubes:
  - name: calls
    sql_table: crm.calls
    dimensions:
      - {name: call_id, sql: call_id, type: number, primary_key: true}
      - {name: wait, sql: wait, type: number, title: Wait time}
    measures: [{name: avg_wait, type: avg, sql: wait, title: Average wait, meta: {better: lower}}]
""",
        encoding="utf-8",
    )
    model = load_model(tmp_path)
    crm = Knowledge(model, build_lexicon(model, [], Values()))
    assert read(crm, "list the calls with a wait time over 10, worst first").order == [("calls.wait", "desc")]
    assert read(crm, "list the calls with a wait time over 10, best first").order == [("calls.wait", "asc")]


def test_money_said_of_rows_without_an_amount_bounds_the_total_of_the_joined_one(tmp_path: Path) -> None:
    (tmp_path / "club.yml").write_text(
        """
cubes:
  - name: members
    sql_table: c.members
    joins: [{name: payments, relationship: one_to_many, sql: "{CUBE}.member_id = {payments}.member_id"}]
    dimensions:
      - {name: member_id, sql: member_id, type: number, primary_key: true}
      - {name: name, sql: name, type: string, title: Member name}
    measures: [{name: count, type: count, title: Number of members}]
  - name: payments
    sql_table: c.payments
    dimensions:
      - {name: payment_id, sql: payment_id, type: number, primary_key: true}
      - {name: amount, sql: amount, type: number, title: Amount}
    measures: [{name: paid, type: sum, sql: amount, title: Amount paid}]
""",
        encoding="utf-8",
    )
    model = load_model(tmp_path)
    club = Knowledge(model, build_lexicon(model, [], Values()))
    counted = read(club, "how many members have spent at least $45?")
    assert [(f.member, f.operator) for f in counted.filters] == [("payments.paid", "gte")]
    assert (counted.counted, counted.measures, counted.unknown) == ("members.count", ["payments.paid"], [])
    listed = read(club, "list the members who spent more than $100")
    assert listed.listing == "members" and listed.filters[0].member == "payments.paid"


def test_a_chinese_document_name_with_a_word_for_lines_names_its_lines_cube(tmp_path: Path) -> None:
    (tmp_path / "shop.yml").write_text(MODEL, encoding="utf-8")
    model = load_model(tmp_path)
    zh = Knowledge(model, build_lexicon(model, [_Term("订单", "table:orders")], Values()))
    r = read(zh, "有多少个订单包含至少4个订单行？")
    assert [(f.member, f.operator, f.values) for f in r.filters] == [("order_lines.count", "gte", ["4"])]
    assert r.counted == "orders.count" and not r.unknown


def test_a_role_of_a_shared_table_lists_the_rows_its_joining_cube_refers_to(tmp_path: Path) -> None:
    (tmp_path / "trips.yml").write_text(
        """
cubes:
  - name: trips
    sql_table: t.trips
    joins:
      - {name: pickup_zones, relationship: many_to_one, sql: "{CUBE}.pickup = {pickup_zones}.zone_id"}
      - {name: dropoff_zones, relationship: many_to_one, sql: "{CUBE}.dropoff = {dropoff_zones}.zone_id"}
    dimensions:
      - {name: trip_id, sql: trip_id, type: number, primary_key: true}
      - {name: status, sql: status, type: string, title: Trip status}
    measures: [{name: count, type: count, title: Number of trips}]
  - name: pickup_zones
    title: Pickup zones
    sql_table: t.zones
    dimensions: [{name: zone_id, sql: zone_id, type: number, primary_key: true}]
  - name: dropoff_zones
    title: Dropoff zones
    sql_table: t.zones
    dimensions: [{name: zone_id, sql: zone_id, type: number, primary_key: true}]
""",
        encoding="utf-8",
    )
    model = load_model(tmp_path)
    trips = Knowledge(model, build_lexicon(model, [], Values({"cancelled": [("trips.status", "cancelled")]})))
    r = read(trips, "list our dropoff zones")
    assert (r.listing, [(f.member, f.operator) for f in r.filters]) == ("dropoff_zones", [("trips.trip_id", "set")])
    assert "trips.trip_id" not in r.columns
    assert not read(trips, "list the zones").filters  # the table's rows: no role named
    share = read(trips, "what share of each pickup zone's trips were cancelled?")  # within each zone
    assert share.dimensions == ["pickup_zones.zone_id"] and [f.member for f in share.part] == ["trips.status"]


SUPPLY = """
cubes:
  - name: partsupp
    sql_table: s.partsupp
    joins:
      - {name: part, relationship: many_to_one, sql: "{CUBE}.partkey = {part}.partkey"}
      - {name: supplier, relationship: many_to_one, sql: "{CUBE}.suppkey = {supplier}.suppkey"}
    dimensions: [{name: ps_key, sql: "partkey || '-' || suppkey", type: string, primary_key: true}]
  - name: part
    title: Parts
    sql_table: s.part
    dimensions:
      - {name: partkey, sql: partkey, type: number, primary_key: true}
      - {name: name, sql: name, type: string, title: Part name}
  - name: supplier
    title: Suppliers
    sql_table: s.supplier
    dimensions:
      - {name: suppkey, sql: suppkey, type: number, primary_key: true}
      - {name: name, sql: name, type: string, title: Supplier name}
"""


def test_who_and_a_verb_asks_for_its_agent_and_that_cube_needs_saying_which(tmp_path: Path) -> None:
    from router.behind import _through_bridge
    from router.parse.reading import Filter

    (tmp_path / "supply.yml").write_text(SUPPLY, encoding="utf-8")
    model = load_model(tmp_path)
    supply = Knowledge(model, build_lexicon(model, [], Values()))
    r = read(supply, "who supplies that part?")
    assert (r.listing, r.referred, r.unknown) == ("supplier", ["part"], [])
    assert not judge(r).answers and "which part" in (judge(r).refusal or "")
    r.filters.append(Filter("part.name", "equals", ["bolt"], "the aggregate's rows"))
    assert judge(r).answers
    assert _through_bridge(r, model, "part") and "partsupp.ps_key" in r.columns  # the rows joining both


def test_an_average_named_beside_a_keyed_row_is_the_average_not_the_column(knowledge: Knowledge) -> None:
    r = read(knowledge, "average order value for customer 5")
    assert (r.intent, r.measures) == ("aggregate", ["orders.avg_total"])
    assert [(f.member, f.values) for f in r.filters] == [("customers.customer_id", ["5"])]


def test_an_average_per_row_of_another_cube_is_the_ratio_of_their_measures(
    tmp_path: Path, knowledge: Knowledge
) -> None:
    from router.aggregate.derive import combine

    q = "average number of order items per order"
    r = read(knowledge, q)
    assert (r.measures, r.per, r.unhonoured) == (["order_lines.count", "orders.count"], "orders.count", [])
    draft = aggregate_draft(r, understand(q, TODAY), knowledge.model)
    rows, _ = combine(draft, [[{"order_lines.count": 30, "orders.count": 12}]])
    assert rows == [{"order_lines.count.per.orders": 2.5}]
    on_average = read(knowledge, "on average, how many order items are in an order?")
    assert on_average.per == "orders.count" and not on_average.unhonoured
    assert read(knowledge, "average number of orders").refusal  # no per: the model has no such average


def test_who_is_asked_of_the_one_cube_the_ranked_rows_belong_to(knowledge: Knowledge) -> None:
    r = read(knowledge, "who placed the most orders in 2024?")
    assert r.dimensions == ["customers.name"] and not r.unhonoured and judge(r).answers  # an order's customer
    relative = read(knowledge, "how many customers who are in the building segment are there?")
    assert "who" not in relative.unhonoured


def test_another_cube_named_in_a_list_of_columns_shows_its_label(knowledge: Knowledge) -> None:
    r = read(knowledge, "show the order items of order 5 with quantity and customer")
    assert (r.intent, r.listing) == ("detail", "order_lines")
    assert {"order_lines.quantity", "customers.name"} <= set(r.columns)


def test_words_in_parentheses_do_not_say_which_date_a_period_is_on(knowledge: Knowledge) -> None:
    r = read(knowledge, "how many late orders (a week after the order date or more) shipped in March 2024?")
    assert r.time_dimension == "orders.shipped_at"


def test_an_average_per_row_a_filtered_count_names_is_over_the_rows_of_its_segment(knowledge: Knowledge) -> None:
    r = read(knowledge, "on average, how many order items are in a late order?")
    assert (r.measures, r.per, r.segments) == (["order_lines.count", "orders.count"], "orders.count", ["orders.late"])
    assert not r.unhonoured and judge(r).answers


def test_each_rows_possessive_before_columns_lists_the_rows(knowledge: Knowledge) -> None:
    r = read(knowledge, "What's on order 5? I need each order item's quantity and order id")
    assert (r.intent, r.listing, r.measures) == ("detail", "order_lines", [])
    assert "order_lines.quantity" in r.columns and not r.unknown
    grouped = read(knowledge, "each customer's revenue in 2024")  # a measure after the possessive groups
    assert (grouped.intent, grouped.dimensions) == ("aggregate", ["customers.name"])


def test_a_count_word_listed_before_a_column_is_a_column_not_its_count(tmp_path: Path) -> None:
    (tmp_path / "shop.yml").write_text(MODEL, encoding="utf-8")
    model = load_model(tmp_path)
    zh = Knowledge(model, build_lexicon(model, [_Term("订单项", "table:order_lines")], Values()))
    r = read(zh, "列出订单5的所有订单项，包括数量、折扣")
    assert (r.intent, r.refusal) == ("detail", None)


def test_a_chinese_superlative_orders_by_the_column_named_before_it(knowledge: Knowledge) -> None:
    r = read(knowledge, "账户余额最高的3个客户")
    assert (r.listing, r.order, r.limit) == ("customers", [("customers.balance", "desc")], 3)


_SUPPLIERS = """
cubes:
  - name: suppliers
    sql_table: shop.suppliers
    dimensions:
      - {name: supplier_id, sql: supplier_id, type: number, primary_key: true}
      - {name: name, sql: name, type: string, title: Supplier name}
      - {name: nation, sql: nation, type: string, title: Supplier nation}
"""


def test_a_glossary_value_also_names_the_same_value_of_another_dimension(tmp_path: Path) -> None:
    (tmp_path / "shop.yml").write_text(MODEL, encoding="utf-8")
    (tmp_path / "suppliers.yml").write_text(_SUPPLIERS, encoding="utf-8")
    model = load_model(tmp_path)
    values = Values({"germany": [("nations.name", "GERMANY"), ("suppliers.nation", "GERMANY")]})
    germany = _Term("Germany", "dimension:nations.name", ["德国"], filter_value="GERMANY")
    zh = Knowledge(model, build_lexicon(model, [germany, _Term("供应商", "table:suppliers")], values))
    rows = read(zh, "德国的供应商")
    assert (rows.listing, [(f.member, f.values) for f in rows.filters]) == (
        "suppliers",
        [("suppliers.nation", ["GERMANY"])],
    )
    customers = read(zh, "德国的客户有多少")  # the glossary's own dimension where the rows reach it
    assert [f.member for f in customers.filters] == ["nations.name"]


def test_a_joined_rows_name_in_a_column_list_comes_with_the_key_that_joins_it(knowledge: Knowledge) -> None:
    r = read(knowledge, "show order 5 with customer name and total")
    assert r.columns.index("orders.customer_id") < r.columns.index("customers.name")


def test_a_segment_and_a_value_said_after_the_share_word_are_one_part(knowledge: Knowledge) -> None:
    r = read(knowledge, "what share of all-time revenue came from late orders (the cancelled status)?")
    assert r.share and [f.member for f in r.part] == ["orders.status"] and r.part_segments == ["orders.late"]
    assert not r.keep and not r.unknown  # not "every status computed, cancelled kept" under the late segment


def test_a_cube_followed_by_a_relative_clause_lists_its_rows(knowledge: Knowledge) -> None:
    r = read(knowledge, "Orders that shipped in 2024 - status and discount")
    assert (r.intent, r.listing) == ("detail", "orders")
    assert {"orders.status", "orders.discount"} <= set(r.columns)


def test_the_biggest_single_row_a_count_counts_is_the_max_of_its_amount(tmp_path: Path) -> None:
    (tmp_path / "shop.yml").write_text(MODEL, encoding="utf-8")
    model = load_model(tmp_path)
    terms = Knowledge(model, build_lexicon(model, [_Term("purchases", "metric:orders.count")], Values()))
    assert read(terms, "biggest single purchase in 2024 - how much was it?").measures == ["orders.max_total"]


def test_a_money_verb_with_a_total_word_asks_the_amount(knowledge: Knowledge) -> None:
    r = read(knowledge, "What have German customers spent in total?")
    assert r.measures == ["orders.revenue"] and not r.unknown


def test_chinese_key_and_name_words_after_a_cube_name_its_key_and_label(tmp_path: Path) -> None:
    (tmp_path / "shop.yml").write_text(MODEL, encoding="utf-8")
    model = load_model(tmp_path)
    zh = Knowledge(
        model, build_lexicon(model, [_Term("订单", "table:orders"), _Term("客户", "table:customers")], Values())
    )
    r = read(zh, "列出2024年的订单，按订单编号排序")
    assert (r.listing, r.order) == ("orders", [("orders.order_id", "asc")])
    assert "customers.name" in read(zh, "列出客户名称和账户余额").columns


_DELIVERIES = """
cubes:
  - name: deliveries
    sql_table: shop.deliveries
    dimensions:
      - {name: delivery_id, sql: delivery_id, type: number, primary_key: true}
      - {name: promised_at, sql: promised_at, type: time, title: Promised date}
      - {name: shipped_at, sql: shipped_at, type: time, title: Ship date}
      - {name: received_at, sql: received_at, type: time, title: Receipt date}
    measures:
      - {name: count, type: count, title: Number of deliveries}
    segments:
      - {name: late, sql: "{CUBE}.received_at > {CUBE}.promised_at", title: Late}
      - {name: shipped_late, sql: "{CUBE}.promised_at < {CUBE}.shipped_at", title: Shipped late}
      - {name: early, sql: "{CUBE}.received_at < {CUBE}.promised_at", title: Early}
"""


def test_a_date_said_after_or_before_another_date_column_is_the_segment_comparing_them(tmp_path: Path) -> None:
    (tmp_path / "deliveries.yml").write_text(_DELIVERIES, encoding="utf-8")
    model = load_model(tmp_path)
    k = Knowledge(model, build_lexicon(model, [], Values()))
    assert read(k, "list the deliveries received after the promised date").segments == ["deliveries.late"]
    assert read(k, "list the deliveries shipped after the promised date").segments == ["deliveries.shipped_late"]
    assert read(k, "deliveries that arrived before the promised date").segments == ["deliveries.early"]
    assert read(k, "list the deliveries received before the ship date").refusal  # no segment says it: not dropped
    defined = read(k, "how many late deliveries in 2024 (late = received after the promised date)?")
    assert defined.segments == ["deliveries.late"] and not defined.refusal


def test_a_ranked_run_of_names_groups_by_its_head(knowledge: Knowledge) -> None:
    r = read(knowledge, "Which 3 customer countries placed the fewest orders in 2024?")
    assert (r.dimensions, r.order, r.limit) == (["nations.name"], [("orders.count", "asc")], 3)


def test_a_dimension_named_by_its_cube_and_a_word_is_named_by_the_word_said_of_that_cube(tmp_path: Path) -> None:
    tiered = MODEL.replace(
        "      - {name: balance, sql: balance,",
        "      - {name: tier, sql: tier, type: string, title: Tier code, meta: {synonyms: [customer rank]}}\n"
        "      - {name: balance, sql: balance,",
    )
    (tmp_path / "shop.yml").write_text(tiered, encoding="utf-8")
    model = load_model(tmp_path)
    r = read(Knowledge(model, build_lexicon(model, [], Values())), "number of customers by rank")
    assert (r.measures, r.dimensions) == (["customers.count"], ["customers.tier"]) and not r.unknown


def test_a_rate_word_after_a_segment_is_the_share_of_its_rows(knowledge: Knowledge) -> None:
    r = read(knowledge, "the late rate of orders by order status in 2024")
    assert (r.share, r.part_segments, r.dimensions) == (True, ["orders.late"], ["orders.status"]) and not r.unknown


def test_a_language_word_reaching_into_a_date_keeps_its_part_outside(knowledge: Knowledge) -> None:
    r = read(knowledge, "2024年的收入和2023年相比")
    assert [m.text for m in r.marks_of("compare")] == ["相比"]


def test_a_bound_word_after_the_name_it_bounds(knowledge: Knowledge) -> None:
    r = read(knowledge, "list the order items with 5 quantity or more")
    assert [(f.member, f.operator, f.values) for f in r.filters] == [("order_lines.quantity", "gte", ["5"])]
    r = read(knowledge, "orders 3 days or longer late")
    assert not any(f.member == "orders.order_id" for f in r.filters)  # a bound's number names no row


def test_a_name_after_a_is_one_row_measured_not_the_groups_ranked(knowledge: Knowledge) -> None:
    r = read(knowledge, "the largest order total of a customer in 2024")
    assert (r.measures, r.dimensions) == (["orders.max_total"], [])


def test_aggregation_words_joined_each_ask_their_measure_of_the_column(knowledge: Knowledge) -> None:
    r = read(knowledge, "the largest and average order total by order status")
    assert (r.measures, r.dimensions) == (["orders.max_total", "orders.avg_total"], ["orders.status"])
    r = read(knowledge, "the smallest and largest order total")
    assert r.refusal and "smallest" in r.refusal  # the model has no minimum of it


def test_a_participle_before_a_filtered_value_says_how_the_rows_have_it(knowledge: Knowledge) -> None:
    r = read(knowledge, "list the customers packed in GERMANY")
    assert not r.unknown and [(f.member, f.values) for f in r.filters] == [("nations.name", ["GERMANY"])]
    assert read(knowledge, "list the customers packed with care").unknown[:1] == ["packed"]


def test_the_biggest_rows_order_by_their_column_before_a_measure(tmp_path: Path) -> None:
    valued = MODEL.replace("title: Order total}", "title: Order total price}").replace(
        "title: Revenue, meta", "title: Order value, meta"
    )
    (tmp_path / "shop.yml").write_text(valued, encoding="utf-8")
    model = load_model(tmp_path)
    r = read(Knowledge(model, build_lexicon(model, [], Values())), "the 5 biggest orders")
    assert (r.order, r.limit) == ([("orders.total", "desc")], 5)


def test_a_measure_said_the_way_its_noun_and_event_verb_name_it(tmp_path: Path) -> None:
    sold = MODEL.replace("title: Number of order items}", "title: Units sold}")
    (tmp_path / "shop.yml").write_text(sold, encoding="utf-8")
    model = load_model(tmp_path)
    r = read(Knowledge(model, build_lexicon(model, [], Values())), "which 3 nations sold the most units?")
    assert (r.measures, r.dimensions, r.limit) == (["order_lines.count"], ["nations.name"], 3) and not r.unknown


def test_how_many_before_a_measure_named_from_its_cube_counts_the_rows_it_bounds(tmp_path: Path) -> None:
    (tmp_path / "shop.yml").write_text(MODEL, encoding="utf-8")
    model = load_model(tmp_path)
    terms = [_Term("订单", "table:orders"), _Term("订单总额", "metric:orders.revenue")]
    r = read(Knowledge(model, build_lexicon(model, terms, Values())), "2024年有多少订单总额超过1000？")
    assert (r.counted, r.dimensions) == ("orders.count", ["orders.order_id"]) and not r.refusal


def test_a_word_joined_to_a_name_shares_its_last_words(knowledge: Knowledge) -> None:
    r = read(knowledge, "list the orders of 2024 with the ship and order dates")
    assert {"orders.shipped_at", "orders.ordered_at"} <= set(r.columns)


def test_a_name_in_a_list_of_columns_is_the_column_not_a_segment_it_also_names(tmp_path: Path) -> None:
    discounted = MODEL.replace(
        "title: Late}", 'title: Late}\n      - {name: discounted, sql: "{CUBE}.discount > 0", title: Discount}'
    )
    (tmp_path / "shop.yml").write_text(discounted, encoding="utf-8")
    model = load_model(tmp_path)
    r = read(Knowledge(model, build_lexicon(model, [], Values())), "list the orders of 2024 with their discount")
    assert "orders.discount" in r.columns and r.segments == []


def test_a_language_word_in_capitals_names_something(tmp_path: Path) -> None:
    (tmp_path / "shop.yml").write_text(MODEL, encoding="utf-8")
    model = load_model(tmp_path)
    bare = read(Knowledge(model, build_lexicon(model, [], Values())), "How many customers are in the US?")
    assert "US" in bare.unknown and not judge(bare).answers  # not the pronoun: never an unfiltered count
    us = _Term("USA", "dimension:nations.name", ["US"], filter_value="USA")
    glossed = Knowledge(model, build_lexicon(model, [us], Values()))
    r = read(glossed, "How many customers are in the US?")
    assert [(f.member, f.values) for f in r.filters] == [("nations.name", ["USA"])] and not r.unknown
    assert not read(glossed, "show us the number of customers").filters


def test_a_name_of_the_counted_rows_and_of_their_owner_is_the_owners(tmp_path: Path) -> None:
    (tmp_path / "shop.yml").write_text(MODEL, encoding="utf-8")
    model = load_model(tmp_path)
    values = Values({"atlas": [("customers.name", "Atlas"), ("nations.name", "Atlas")]})
    k = Knowledge(model, build_lexicon(model, [], values))
    owned = read(k, "How many customers does Atlas have?")
    assert [(f.member, f.values) for f in owned.filters] == [("nations.name", ["Atlas"])]
    named = read(k, "orders of the customer Atlas")
    assert [f.member for f in named.filters] == ["customers.name"]


def test_a_listing_that_names_no_column_shows_the_amount_its_sum_adds_up(tmp_path: Path) -> None:
    wide = MODEL.replace("      - {name: total, sql: total, type: number, title: Order total}\n", "").replace(
        "      - {name: shipped_at, sql: shipped_at, type: time, title: Ship date}\n",
        "      - {name: shipped_at, sql: shipped_at, type: time, title: Ship date}\n"
        + "".join(f"      - {{name: note_{i}, sql: note_{i}, type: string, title: Note {i}}}\n" for i in range(6))
        + "      - {name: total, sql: total, type: number, title: Order total}\n",
    )
    (tmp_path / "shop.yml").write_text(wide, encoding="utf-8")
    model = load_model(tmp_path)
    r = read(Knowledge(model, build_lexicon(model, [], Values())), "show me every order")
    assert r.listing == "orders" and "orders.total" in r.columns


def test_a_literal_that_cuts_into_a_name_leaves_the_rest_of_the_name(tmp_path: Path) -> None:
    (tmp_path / "shop.yml").write_text(MODEL, encoding="utf-8")
    model = load_model(tmp_path)

    def probe(text: str) -> list[Target]:
        return [Target("value", "orders.status", text)] if text == "2-LATE" else []

    k = Knowledge(model, build_lexicon(model, [], Values()), probe=probe)
    r = read(k, "list the 2-LATE orders of 2024")  # "LATE orders" is a segment's name the literal cuts into
    assert (r.listing, [(f.member, f.values) for f in r.filters]) == ("orders", [("orders.status", ["2-LATE"])])


def test_a_chinese_count_before_a_clause_counts_its_head_noun_not_the_column_the_clause_sets(
    tmp_path: Path,
) -> None:
    (tmp_path / "shop.yml").write_text(MODEL, encoding="utf-8")
    model = load_model(tmp_path)
    terms = [
        _Term("订单", "table:orders"),
        _Term("状态", "dimension:orders.status"),
        _Term("金额", "dimension:orders.total"),
    ]
    zh = Knowledge(model, build_lexicon(model, terms, Values({"cancelled": [("orders.status", "cancelled")]})))
    r = read(zh, "2024年有多少个状态为cancelled、金额超过100的订单？")
    assert r.measures == ["orders.count"] and not r.refusal  # not a distinct count of the status
    assert [(f.member, f.operator) for f in r.filters] == [
        ("orders.status", "equals"),
        ("orders.total", "gt"),
    ]


def test_a_year_like_number_after_a_singular_row_name_is_its_key(knowledge: Knowledge) -> None:
    keyed = read(knowledge, "average order value for order 2000")
    assert [(f.member, f.values) for f in keyed.filters] == [("orders.order_id", ["2000"])]
    assert keyed.key_periods == ["2000"] and not keyed.periods(understand("order 2000", TODAY).time_ranges)
    grouped = read(knowledge, "revenue by customer 2024")  # a group-by, then the year
    assert not grouped.key_periods and not grouped.filters


def test_a_year_after_a_value_stays_a_year(knowledge: Knowledge) -> None:
    r = read(knowledge, "revenue in GERMANY 2024 vs 2023")
    assert not r.key_periods and [(f.member, f.values) for f in r.filters] == [("nations.name", ["GERMANY"])]


def test_a_calendar_word_is_no_value_coded_like_it_and_that_period_said_again_is_used(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    folder: Path = tmp_path_factory.mktemp("coded")
    (folder / "shop.yml").write_text(MODEL, encoding="utf-8")
    model = load_model(folder)
    coded = Knowledge(model, build_lexicon(model, [], Values({"day": [("nations.name", "DAY")]})))
    r = read(coded, "which day had the highest revenue in 2024?")
    assert not r.filters and not r.unknown  # the grain, not the nation coded DAY
    assert read(coded, "revenue of DAY in 2024").filters[0].values == ["DAY"]  # written as the value
    again = read(knowledge_of(model), "revenue in 2024 and the orders of that quarter")
    assert "quarter" not in again.unknown


def knowledge_of(model: SemanticModel) -> Knowledge:
    return Knowledge(model, build_lexicon(model, [], Values()))


def test_each_owner_of_the_averaged_rows_groups_the_average(tmp_path: Path) -> None:
    (tmp_path / "parts.yml").write_text(
        """cubes:
  - name: parts
    sql_table: shop.parts
    dimensions:
      - {name: part_id, sql: part_id, type: number, primary_key: true}
      - {name: maker, sql: maker, type: string, title: Maker}
      - {name: size, sql: size, type: number, title: Size}
    measures:
      - {name: avg_size, type: avg, sql: size, title: Average size}
""",
        encoding="utf-8",
    )
    model = load_model(tmp_path)
    terms = [
        _Term("零件", "table:parts"),
        _Term("制造商", "dimension:parts.maker"),
        _Term("尺寸", "dimension:parts.size"),
    ]
    zh = Knowledge(model, build_lexicon(model, terms, Values()))
    r = read(zh, "每个制造商的零件平均尺寸是多少")  # each maker's parts: grouped by the maker
    assert r.measures == ["parts.avg_size"] and r.dimensions == ["parts.maker"]
    assert read(zh, "每个零件的平均尺寸").dimensions == []  # the averaged rows themselves: no groups


def test_each_column_s_rows_of_another_cube_group_by_the_column(knowledge: Knowledge) -> None:
    terms = [
        _Term("国家", "dimension:nations.name"),
        _Term("客户", "table:customers"),
        _Term("收入", "metric:orders.revenue"),
    ]
    zh = Knowledge(knowledge.model, build_lexicon(knowledge.model, terms, Values()))
    r = read(zh, "各个国家的客户收入是多少")  # each country's customers: grouped by the country
    assert r.dimensions == ["nations.name"] and r.measures == ["orders.revenue"] and not r.unknown


def test_shares_of_a_limited_ranking_are_of_every_groups_total(knowledge: Knowledge) -> None:
    from router.aggregate.derive import combine

    question = "top 2 countries by revenue and their share"
    draft = aggregate_draft(read(knowledge, question), understand(question, TODAY), knowledge.model)
    assert draft.post == ["share_of_total"] and draft.queries[0]["limit"] == 2
    assert "dimensions" not in draft.queries[1] and "limit" not in draft.queries[1]  # the total of every country
    ranked = [{"nations.name": "A", "orders.revenue": 30.0}, {"nations.name": "B", "orders.revenue": 20.0}]
    rows, derived = combine(draft, [ranked, [{"orders.revenue": 200.0}]])
    assert [r["orders.revenue.share"] for r in rows] == [0.15, 0.1]  # not 0.6 / 0.4 of the two shown
    assert derived["share"]["together"] == {"orders.revenue": 0.25}


def test_a_named_value_the_measure_cannot_be_filtered_by_is_not_honoured(knowledge: Knowledge) -> None:
    r = read(knowledge, "how many nations are there? cancelled only")  # nations reach no order status
    assert r.measures == ["nations.count"] and not r.filters and r.unhonoured == ["cancelled"]
    assert not judge(r).answers and "cancelled" in (judge(r).refusal or "")
    applied = read(knowledge, "how many cancelled orders were there")
    assert applied.filters and not applied.unhonoured


def test_a_chinese_listing_s_head_comes_before_the_columns_it_asks_to_include(knowledge: Knowledge) -> None:
    terms = [_Term("订单", "table:orders"), _Term("客户", "table:customers")]
    zh = Knowledge(knowledge.model, build_lexicon(knowledge.model, terms, Values()))
    r = read(zh, "列出2024年的订单，包括客户")  # the orders, with their customer: not the customers
    assert r.listing == "orders"
    assert read(zh, "列出下过订单的客户").listing == "customers"  # no column list: the last noun is the head


def test_a_time_superlative_before_the_listed_noun_orders_by_its_time(knowledge: Knowledge) -> None:
    one = read(knowledge, "show our earliest order")
    assert (one.listing, one.order, one.limit) == ("orders", [("orders.ordered_at", "asc")], 1)
    many = read(knowledge, "list the newest orders from building customers")
    assert (many.order, many.limit) == ([("orders.ordered_at", "desc")], None)


def test_sorted_by_a_date_sorts_up_when_no_way_is_said(knowledge: Knowledge) -> None:
    r = read(knowledge, "list the cancelled orders sorted by order date")
    assert r.intent == "detail" and r.order == [("orders.ordered_at", "asc")]


def test_a_value_before_the_grouped_noun_still_filters(knowledge: Knowledge) -> None:
    r = read(knowledge, "which GERMANY customer has the most orders")
    assert r.dimensions == ["customers.name"]
    assert [(f.member, f.values) for f in r.filters] == [("nations.name", ["GERMANY"])]


def test_asking_for_both_extremes_answered_by_one_is_not_honoured(knowledge: Knowledge) -> None:
    r = read(knowledge, "show the most and least expensive orders")
    assert r.order and r.unhonoured == ["most and least expensive"]
    assert not read(knowledge, "list orders by total from largest to smallest").unhonoured


def test_the_noun_a_row_count_title_counts_names_the_cubes_rows(tmp_path: Path) -> None:
    (tmp_path / "m.yml").write_text(
        """
cubes:
  - name: partsupp
    title: Part suppliers
    sql_table: s.partsupp
    dimensions:
      - {name: id, sql: id, type: number, primary_key: true}
    measures:
      - {name: count, type: count, title: Number of part-supplier offers}
""",
        encoding="utf-8",
    )
    lexicon = build_lexicon(load_model(tmp_path))
    found = lexicon.find("show me the supplier offers")
    assert [(m.text, [t.path for t in m.of("cube")]) for m in found] == [("supplier offers", ["partsupp"])]


def test_a_closing_list_names_its_columns_after_a_spaced_dash_or_a_chinese_show_me(knowledge: Knowledge) -> None:
    r = read(knowledge, "orders - status, total and when they were ordered")  # "orders - status": two names
    assert r.listing == "orders" and r.columns[-1] == "orders.ordered_at" and not r.unknown
    zh = Knowledge(
        knowledge.model,
        build_lexicon(knowledge.model, [_Term("订单", "table:orders"), _Term("客户", "table:customers")], Values()),
    )
    r = read(zh, "上个月的订单，给我看订单号、日期和客户")  # the rows named before the list: orders
    assert r.listing == "orders" and "customers.name" in r.columns and not r.unknown


def test_groups_ranked_by_a_share_within_each_group_are_ranked_by_the_share_not_the_count(
    tmp_path: Path,
) -> None:
    from router.aggregate.derive import combine

    (tmp_path / "shop.yml").write_text(MODEL, encoding="utf-8")
    model = load_model(tmp_path)
    k = Knowledge(model, build_lexicon(model, [], Values({"cancelled": [("orders.status", "cancelled")]})))
    question = "which market segment has the highest share of orders that were cancelled"
    draft = aggregate_draft(read(k, question), understand(question, TODAY), model)
    assert "limit" not in draft.queries[0] and draft.post == ["part", "share_rank:desc:1"]
    part = [{"customers.segment": "A", "orders.count": 30}, {"customers.segment": "B", "orders.count": 20}]
    whole = [{"customers.segment": "A", "orders.count": 300}, {"customers.segment": "B", "orders.count": 40}]
    rows, _ = combine(draft, [part, whole])
    assert [(r["customers.segment"], r["orders.count.share"]) for r in rows] == [("B", 0.5)]


def test_a_rows_identity_is_its_own_code_not_a_code_of_a_place(tmp_path: Path) -> None:
    from router.parse.facts import identity

    (tmp_path / "m.yml").write_text(
        """
cubes:
  - name: trips
    title: Trips
    sql_table: s.trips
    dimensions:
      - {name: id, sql: id, type: number, primary_key: true}
      - {name: zip, sql: zip, type: string, title: Billing postal code}
      - {name: code, sql: code, type: string, title: Trip code}
""",
        encoding="utf-8",
    )
    assert identity(load_model(tmp_path), "trips") == "trips.code"


def test_a_cube_named_beside_a_value_says_whose_value_it_is(knowledge: Knowledge) -> None:
    terms = [_Term("订单", "table:orders"), _Term("客户", "table:customers")]
    zh = Knowledge(
        knowledge.model, build_lexicon(knowledge.model, terms, Values({"德国": [("nations.name", "GERMANY")]}))
    )
    r = read(zh, "德国客户的订单数是多少")
    assert r.measures == ["orders.count"] and not r.unknown
    assert [(f.member, f.values) for f in r.filters] == [("nations.name", ["GERMANY"])]


def test_a_rate_word_after_a_segment_asks_the_models_rate_of_that_segment(knowledge: Knowledge) -> None:
    r = read(knowledge, "late rate by market segment")
    assert r.measures == ["orders.late_ratio"] and r.dimensions == ["customers.segment"] and not r.segments


def test_a_bound_right_after_the_rows_name_is_on_their_amount(knowledge: Knowledge) -> None:
    r = read(knowledge, "builders over 300k")
    assert _filters(r) == [("customers.balance", "gt", ["300000"])] and r.listing == "customers"
    assert r.segments == ["customers.key_accounts"]  # the segment still filters the rows
    assert not read(knowledge, "nations over 300").filters  # no amount: refused, not guessed


def test_which_column_of_rows_named_before_it_lists_them_with_it(knowledge: Knowledge) -> None:
    r = read(knowledge, "our customers: which market segment are they in and what account balance")
    assert r.listing == "customers" and {"customers.segment", "customers.balance"} <= set(r.columns)


def test_a_label_asked_for_names_the_rows_and_a_row_named_by_key_is_no_head(knowledge: Knowledge) -> None:
    r = read(knowledge, "which customer names order 12")
    assert r.listing == "customers" and r.keyed == ["orders"]


def test_the_amount_a_filtered_sum_adds_up_is_the_rows_amount(knowledge: Knowledge) -> None:
    r = read(knowledge, "order 12: the order items with quantity and item amount")
    assert r.listing == "order_lines" and {"order_lines.quantity", "order_lines.amount"} <= set(r.columns)


def test_a_number_word_beside_a_number_column_is_its_value(knowledge: Knowledge) -> None:
    r = read(knowledge, "order items with a quantity of three")
    assert _filters(r) == [("order_lines.quantity", "equals", ["3"])]


def test_an_unused_column_name_is_unknown_even_when_it_looks_inflected(knowledge: Knowledge) -> None:
    assert "quantities" in read(knowledge, "how many orders have big quantities").unknown


def test_a_name_with_a_referring_word_is_a_value_only_as_written(knowledge: Knowledge) -> None:
    assert not read(knowledge, "can you pull the numbers for the big ones").filters
    r = read(knowledge, "list the customers in Big Ones")
    assert ("customers.segment", "equals", ["Big Ones"]) in _filters(r)
    row = ("Big Ones", Target("value", "customers.name", "Big Ones", "rows"))  # a row the pipeline recognised
    assert not parse(understand("revenue of the big ones", TODAY), knowledge, [row]).filters
    assert parse(understand("revenue of Big Ones", TODAY), knowledge, [row]).filters


def test_a_count_word_beside_a_segment_counts_its_rows_and_the_segment_filters(knowledge: Knowledge) -> None:
    r = read(knowledge, "how many old nations are there")
    assert r.measures == ["nations.count"] and r.segments == ["nations.old"] and not r.unknown


def test_a_column_followed_by_mix_groups_by_it(knowledge: Knowledge) -> None:
    r = read(knowledge, "order status mix of revenue in 2024")
    assert r.measures == ["orders.revenue"] and r.dimensions == ["orders.status"] and not r.unknown


def test_a_verb_of_rows_coming_about_restates_dated_rows(knowledge: Knowledge) -> None:
    assert not read(knowledge, "how many orders did we add in 2024").unknown
    assert not read(knowledge, "2024年新增了多少Orders").unknown


def test_a_chinese_verb_of_money_with_a_word_for_money_asks_the_sales(knowledge: Knowledge) -> None:
    r = read(knowledge, "2024年一共卖了多少钱")
    assert r.measures == ["orders.revenue"] and not r.unknown


def test_both_superlatives_of_one_column_ask_its_max_and_min(knowledge: Knowledge) -> None:
    r = read(knowledge, "what's the price of the most expensive gift, and of the cheapest one?")
    assert r.measures == ["gifts.top_price", "gifts.low_price"] and not r.unknown and not r.refusal
    r = read(knowledge, "the most and least expensive gifts")
    assert r.measures == ["gifts.top_price", "gifts.low_price"]


def test_a_number_word_no_pass_used_is_unknown_unless_it_restates_a_count(knowledge: Knowledge) -> None:
    assert "seven" in read(knowledge, "revenue of seven customers").unknown
    assert not read(knowledge, "revenue by nation for the three nations").unknown
    assert read(knowledge, "revenue of the top three customers").limit == 3
