"""Chat writing read as meant: typos (router.parse.spelling), negative bounds, "pls", Chinese partial names
after 按, and a measure's name followed by a year (a period, not a key)."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from cube_models.model import load_model
from router.parse import Knowledge, build_lexicon
from router.parse.reading import Reading
from router.parse.spelling import Speller, one_edit
from router.understanding.core import understand
from tests.unit.router.test_parse import Values, read
from tests.unit.router.test_parse_columns import MODEL

REVENUE = """
  - name: revenue
    title: Revenue
    sql_table: shop.revenue
    dimensions:
      - {name: line_id, sql: line_id, type: string, primary_key: true, title: Line id}
      - {name: ts, sql: ts, type: time, title: Booked at}
    measures:
      - {name: revenue, type: sum, sql: amount, title: Revenue}
  - name: shipments
    title: Shipments
    sql_table: shop.shipments
    joins:
      - {name: customers, relationship: many_to_one, sql: "{CUBE}.customer_id = {customers}.customer_id"}
    dimensions:
      - {name: shipment_id, sql: shipment_id, type: number, primary_key: true}
      - {name: customer_id, sql: customer_id, type: number}
    measures:
      - {name: units, type: sum, sql: quantity, title: Units shipped, meta: {synonyms: [orders shipped]}}
  - name: payments
    title: Payments
    sql_table: shop.payments
    joins:
      - {name: customers, relationship: many_to_one, sql: "{CUBE}.customer_id = {customers}.customer_id"}
    dimensions:
      - {name: payment_id, sql: payment_id, type: number, primary_key: true}
      - {name: customer_id, sql: customer_id, type: number}
      - {name: paid_at, sql: paid_at, type: time, title: Paid at}
      - {name: amount, sql: amount, type: number, title: Amount}
    measures:
      - {name: paid, type: sum, sql: amount, title: Amount paid, format: currency}
      - {name: count, type: count, title: Number of payments, meta: {synonyms: [付款笔数, 付款数]}}
      - {name: largest, type: max, sql: amount, title: Largest payment}
  - name: goods
    title: Goods
    sql_table: shop.goods
    meta: {synonyms: [货品]}
    dimensions:
      - {name: goods_id, sql: goods_id, type: number, primary_key: true}
      - {name: name, sql: name, type: string, title: Goods name}
      - {name: category, sql: category, type: string, title: Category, meta: {synonyms: [品类]}}
      - {name: price, sql: price, type: number, title: List price}
    measures:
      - {name: avg_price, type: avg, sql: price, title: Average list price}
  - name: vendors
    title: Vendors
    sql_table: shop.vendors
    dimensions:
      - {name: vendor_id, sql: vendor_id, type: number, primary_key: true}
      - {name: name, sql: name, type: string, title: Vendor name}
  - name: offers
    title: Offers
    sql_table: shop.offers
    joins:
      - {name: goods, relationship: many_to_one, sql: "{CUBE}.goods_id = {goods}.goods_id"}
      - {name: vendors, relationship: many_to_one, sql: "{CUBE}.vendor_id = {vendors}.vendor_id"}
    dimensions:
      - {name: offer_id, sql: offer_id, type: number, primary_key: true}
      - {name: goods_id, sql: goods_id, type: number}
      - {name: vendor_id, sql: vendor_id, type: number}
      - {name: stock, sql: stock, type: number, title: Stock on hand}
  - name: staff
    title: Staff
    sql_table: shop.staff
    meta: {synonyms: [职员]}
    measures:
      - {name: count, type: count, title: Number of staff}
    dimensions:
      - {name: staff_id, sql: staff_id, type: number, primary_key: true}
      - {name: name, sql: name, type: string, title: Name}
      - {name: birth_date, sql: birth_date, type: time, title: Birth date}
  - name: trips
    title: Trips
    sql_table: shop.trips
    meta: {synonyms: [行程]}
    joins:
      - {name: machines, relationship: many_to_one, sql: "{CUBE}.machine_id = {machines}.machine_id"}
    dimensions:
      - {name: trip_id, sql: trip_id, type: number, primary_key: true}
      - {name: machine_id, sql: machine_id, type: number}
      - {name: start_delay, sql: start_delay, type: number, title: Start delay (minutes), meta: {synonyms: [出发延误]}}
      - {name: end_delay, sql: end_delay, type: number, title: End delay (minutes), meta: {synonyms: [到达延误]}}
      - {name: ride_time, sql: ride_time, type: number, title: Ride time (minutes)}
      - {name: distance, sql: distance, type: number, title: Distance}
      - {name: departed_on, sql: departed_on, type: time}
      - {name: operator, sql: operator, type: string}
    measures:
      - {name: count, type: count, title: Number of trips}
      - {name: operators, type: count_distinct, sql: operator, title: Operators running, meta: {synonyms: [operators]}}
      - {name: total_distance, type: sum, sql: distance, title: Total distance}
      - {name: total_ride_time, type: sum, sql: ride_time, title: Total ride time}
    segments:
      - {name: night, sql: "{CUBE}.operator IN ('owl', 'bat')", title: Night trips}
  - name: machines
    title: Machines
    sql_table: shop.machines
    dimensions:
      - {name: machine_id, sql: machine_id, type: number, primary_key: true, title: Machine number}
      - {name: built, sql: built, type: number, title: Year built}
    measures:
      - {name: count, type: count, title: Number of machines, meta: {synonyms: [fleet machines]}}
  - name: members
    title: Members
    sql_table: shop.members
    dimensions:
      - {name: member_key, sql: m_key, type: number, primary_key: true}
      - {name: name, sql: m_name, type: string, title: Member name}
  - name: visits
    title: Visits
    sql_table: shop.visits
    joins:
      - {name: members, relationship: many_to_one, sql: "{CUBE}.v_memberkey = {members}.m_key"}
    dimensions:
      - {name: visit_key, sql: v_key, type: number, primary_key: true}
      - {name: member_key, sql: v_memberkey, type: number}
    measures:
      - {name: count, type: count, title: Number of visits}
      - {name: visitors, type: count_distinct, sql: v_memberkey, title: Visiting members}
"""


@pytest.fixture(scope="module")
def knowledge(tmp_path_factory: pytest.TempPathFactory) -> Knowledge:
    folder: Path = tmp_path_factory.mktemp("model")
    (folder / "shop.yml").write_text(MODEL + REVENUE, encoding="utf-8")
    model = load_model(folder)
    values = Values(
        {
            "paris": [("customers.city", "Paris")],
            "acme": [("vendors.name", "Acme")],
            "jumbo box": [("lines.code", "JUMBO BOX")],
            "jumbo bag": [("lines.code", "JUMBO BAG")],
            "a330-243": [("customers.engine", "A330-243")],
            "3-medium": [("orders.priority", "3-MEDIUM")],
            "3-low": [("orders.priority", "3-LOW")],
            "owl": [("trips.operator", "owl")],
            "bat": [("trips.operator", "bat")],
        }
    )
    return Knowledge(model, build_lexicon(model, [], values))


@pytest.mark.parametrize(
    ("a", "b", "near"),
    [
        ("revnue", "revenue", True),  # a letter dropped
        ("qaurter", "quarter", True),  # neighbours swapped
        ("quantiti", "quantity", True),  # a letter changed
        ("orderss", "orders", True),  # a letter added
        ("qaurtre", "quarter", False),  # two edits
        ("orders", "orders", False),
    ],
)
def test_one_edit(a: str, b: str, near: bool) -> None:
    assert one_edit(a, b) is near


def test_a_lower_case_word_nothing_knows_is_read_as_the_one_known_word_one_edit_away(knowledge: Knowledge) -> None:
    speller = Speller.build(knowledge.lexicon)
    text, fixes = speller.correct("revnue by qaurter for custmers in Paris")
    assert text == "revenue by quarter for customers in Paris"
    assert fixes == [("revnue", "revenue"), ("qaurter", "quarter"), ("custmers", "customers")]


def test_names_known_words_and_short_words_are_left_as_written(knowledge: Knowledge) -> None:
    speller = Speller.build(knowledge.lexicon)
    for text in ("Which lines contain the song Smells Like Teen Spirit?", "JUMBO orders", "the qty of Paris"):
        assert speller.correct(text) == (text, [])
    text = "how did revenue stack up against last year"  # an English word one edit from "stock" is meant
    assert speller.correct(text) == (text, [])


def test_a_bound_on_a_negative_number_keeps_its_sign(knowledge: Knowledge) -> None:
    r = read(knowledge, "customers with account balance below -990")
    assert [(f.member, f.operator, f.values) for f in r.filters] == [("customers.balance", "lt", ["-990"])]
    r = read(knowledge, "列出账户余额低于 -990 的客户")
    assert [(f.member, f.operator, f.values) for f in r.filters] == [("customers.balance", "lt", ["-990"])]


def test_a_range_written_with_a_dash_after_between_is_a_range(knowledge: Knowledge) -> None:
    r = read(knowledge, "customers with account balance between 100-200")
    assert {(f.operator, tuple(f.values)) for f in r.filters if f.member == "customers.balance"} == {
        ("gte", ("100",)),
        ("lte", ("200",)),
    }


def test_chinese_words_after_an_order_by_that_are_part_of_a_column_name_order_by_it(knowledge: Knowledge) -> None:
    r = read(knowledge, "列出账户余额超过1000的客户,按余额从低到高排")
    assert r.order == [("customers.balance", "asc")] and "余额" not in r.unknown


def test_chat_filler_says_nothing(knowledge: Knowledge) -> None:
    r = read(knowledge, "number of orders in 2024 pls")
    assert r.measures == ["orders.count"] and not r.unknown and not r.refusal
    r = read(knowledge, "how did the number of orders in 2024 stack up against 2023")
    assert r.measures == ["orders.count"] and not r.unknown


def test_a_year_after_a_name_that_is_also_a_measure_is_the_period(knowledge: Knowledge) -> None:
    r = read(knowledge, "revenue 2024")
    assert r.measures and not r.filters and not r.keyed


def test_of_two_names_as_long_the_one_not_begun_by_an_aggregation_word_is_read(knowledge: Knowledge) -> None:
    r = read(knowledge, "top 5 customers by number of orders shipped")
    assert r.measures == ["shipments.units"] and not r.unknown


def test_a_group_by_a_label_rows_share_is_a_group_by_their_key_too(knowledge: Knowledge) -> None:
    r = read(knowledge, "top 3 customers by number of orders")
    assert r.dimensions == ["customers.name"]
    r = read(replace(knowledge, keyed_labels=frozenset({"customers.name"})), "top 3 customers by number of orders")
    assert r.dimensions == ["customers.customer_id", "customers.name"]


def test_a_chinese_analytics_word_names_the_one_column_whose_name_ends_in_its_english(knowledge: Knowledge) -> None:
    r = read(knowledge, "列出价格超过100的货品")  # 价格 = price: "List price" of the goods listed
    assert [(f.member, f.operator) for f in r.filters] == [("goods.price", "gt")] and "价格" not in r.unknown


def test_a_year_joined_by_a_plus_sign_is_a_year_not_a_bound(knowledge: Knowledge) -> None:
    r = read(knowledge, "revenue for 2024 + the orders that make it up")
    assert not r.filters and not r.marks_of("bound")
    r = read(knowledge, "customers with 45+ orders")
    assert [(f.operator, f.values) for f in r.filters] == [("gte", ["45"])]


def test_the_first_word_of_several_values_of_one_column_names_them_all(knowledge: Knowledge) -> None:
    r = read(knowledge, "order lines in JUMBO codes")
    assert [(f.member, sorted(f.values)) for f in r.filters] == [("lines.code", ["JUMBO BAG", "JUMBO BOX"])]
    r = read(knowledge, "customers flying A330s")  # a model number names even one value
    assert [(f.member, f.values) for f in r.filters] == [("customers.engine", ["A330-243"])]
    r = read(knowledge, "top 3 customers by number of orders")  # a number is no head of "3-MEDIUM"
    assert not r.filters


def test_a_word_in_the_name_is_a_contains_filter_on_the_label(knowledge: Knowledge) -> None:
    r = read(knowledge, "customers with 'smith' in the name")
    assert [(f.member, f.operator, f.values) for f in r.filters] == [("customers.name", "contains", ["smith"])]


def test_the_words_a_parenthesised_definition_defines_are_not_unknown(knowledge: Knowledge) -> None:
    r = read(knowledge, "which customers are vips (have VIP in the name)?")
    assert [(f.operator, f.values) for f in r.filters] == [("contains", ["VIP"])] and not r.unknown


def test_the_most_money_of_rows_with_no_date_is_the_money_of_the_dated_rows_that_refer_to_them(
    knowledge: Knowledge,
) -> None:
    r = read(knowledge, "which customer has brought in the most money?")
    assert r.measures == ["payments.paid"] and r.dimensions == ["customers.name"] and not r.unknown


def test_an_irregular_verb_names_the_date_its_noun_titles(knowledge: Knowledge) -> None:
    r = read(knowledge, "staff born before 1960")
    assert r.time_dimension == "staff.birth_date" and not r.unknown


def test_a_chinese_column_right_before_its_cube_groups_the_cube_rows_by_it(knowledge: Knowledge) -> None:
    r = read(knowledge, "各品类货品的平均标价是多少")
    assert r.dimensions == ["goods.category"] and r.measures == ["goods.avg_price"]


def test_a_superlative_adjective_before_a_dimension_ranks_its_groups(knowledge: Knowledge) -> None:
    r = read(knowledge, "busiest city by number of customers")
    assert (r.dimensions, r.measures, r.limit) == (["customers.city"], ["customers.count"], 1)
    r = read(knowledge, "busiest cities by number of customers")
    assert r.dimensions == ["customers.city"] and r.limit != 1


def test_a_bound_on_a_column_of_rows_referring_to_the_listed_ones_lists_those_rows(knowledge: Knowledge) -> None:
    r = read(knowledge, "which goods does Acme have with stock on hand under 100?")
    assert r.listing == "offers"
    assert {(f.member, f.operator) for f in r.filters} == {("vendors.name", "equals"), ("offers.stock", "lt")}


@pytest.mark.parametrize(
    ("question", "grain"),
    [
        ("Which 5 days in 2024 had the most orders?", "day"),
        ("the 3 busiest months of 2024", "month"),
        ("top 10 dates by revenue", "day"),
        ("revenue in the last 3 months", None),  # a period, not ranked periods
    ],
)
def test_a_number_of_periods_ranked_is_a_grain(question: str, grain: str | None) -> None:
    assert understand(question, date(2024, 12, 31), use_llm=False).granularity == grain


def test_over_before_a_period_says_nothing(knowledge: Knowledge) -> None:
    r = read(knowledge, "revenue over the past six weeks")
    assert r.measures and not r.unknown


def test_a_chinese_cube_name_followed_by_a_count_suffix_names_its_row_count(knowledge: Knowledge) -> None:
    r = read(knowledge, "今年的职员量是多少")
    assert r.measures == ["staff.count"] and not r.unknown


def test_one_measure_per_another_the_model_lacks_is_refused_not_shown_side_by_side(knowledge: Knowledge) -> None:
    r = read(knowledge, "which cities have the highest revenue per number of customers?")
    assert r.refusal and "per" in r.refusal


def test_a_rows_part_pointing_back_at_the_aggregates_period_knows_those_words() -> None:
    from router.pipeline import _referring_back  # the mixed path's rows part (router.pipeline)

    r = Reading("把那天的订单和Foo都列出来", "zh", date(2024, 12, 31))
    r.unknown, r.unknown_spans = ["那天", "Foo"], [(1, 3), (7, 10)]
    _referring_back(r)
    assert (r.unknown, r.unknown_spans) == (["Foo"], [(7, 10)])


def test_in_total_after_a_count_asks_no_amount(knowledge: Knowledge) -> None:
    r = read(knowledge, "how many payments did we get in 2024 in total?")
    assert r.measures == ["payments.count"]
    r = read(knowledge, "how many payments did we get in 2024, and what was the total?")
    assert r.measures == ["payments.count", "payments.paid"]


def test_a_bound_in_hours_or_minutes_said_in_chinese_is_converted_to_the_columns_unit(knowledge: Knowledge) -> None:
    r = read(knowledge, "到达延误超过3小时的行程有多少")
    assert [(f.member, f.operator, f.values) for f in r.filters] == [("trips.end_delay", "gt", ["180"])]
    r = read(knowledge, "到达延误超过5个小时的行程有多少")
    assert [(f.member, f.values) for f in r.filters] == [("trips.end_delay", ["300"])]


def test_a_count_after_rows_and_a_clause_ending_in_de_counts_those_rows(knowledge: Knowledge) -> None:
    r = read(knowledge, "行程里，到达延误超过3小时的有多少个？")
    assert r.intent == "aggregate" and r.measures == ["trips.count"]
    assert [(f.member, f.values) for f in r.filters] == [("trips.end_delay", ["180"])]


def test_a_bound_said_of_rows_whose_cube_adds_up_several_columns_bounds_none_of_them(knowledge: Knowledge) -> None:
    r = read(knowledge, "延误超过30分钟的行程有多少")
    assert not [f for f in r.filters if f.member in ("trips.ride_time", "trips.distance")]


def test_a_unit_after_a_column_in_that_unit_and_a_part_of_a_named_column_are_known(knowledge: Knowledge) -> None:
    r = read(knowledge, "列出到达延误超过3小时的行程，带上到达延误分钟数，按延误从大到小排")
    assert r.order == [("trips.end_delay", "desc")] and not r.unknown


def test_a_name_the_model_gives_only_to_a_cubes_row_count_names_its_rows_in_a_listing(knowledge: Knowledge) -> None:
    r = read(knowledge, "Which fleet machines were built before 1970?")
    assert r.listing == "machines" and [(f.member, f.operator) for f in r.filters] == [("machines.built", "lte")]


def test_total_value_of_rows_is_the_sum_of_their_amount(knowledge: Knowledge) -> None:
    r = read(knowledge, "total value of payments in 2024")
    assert r.measures == ["payments.paid"] and not r.unknown


def test_ie_and_eg_introduce_a_restatement(knowledge: Knowledge) -> None:
    r = read(knowledge, "number of orders in 2024, i.e. last year")
    assert r.measures == ["orders.count"] and not r.unknown


def test_date_after_the_words_naming_a_date_column_restates_it(knowledge: Knowledge) -> None:
    r = read(knowledge, "list trips in 2024 with distance and departed date")
    assert "trips.departed_on" in r.columns and not r.unknown


def test_after_each_a_name_the_model_gives_only_to_a_distinct_count_names_the_values_counted(
    knowledge: Knowledge,
) -> None:
    r = read(knowledge, "total distance for each operator running, in 2024")
    assert r.measures == ["trips.total_distance"] and r.dimensions == ["trips.operator"]
    assert read(knowledge, "how many operators running trips in 2024").measures == ["trips.operators"]


def test_a_distinct_count_of_a_foreign_key_counts_the_referred_rows_passing_a_bound(knowledge: Knowledge) -> None:
    r = read(knowledge, "how many visiting members made more than 30 visits?")
    assert r.counted == "visits.visitors" and r.dimensions == ["members.member_key"]
    assert [(f.member, f.operator, f.values) for f in r.filters] == [("visits.count", "gt", ["30"])]


def test_newest_to_oldest_in_chinese_orders_by_date_and_the_latest_n_are_rows(knowledge: Knowledge) -> None:
    r = read(knowledge, "最近的10个订单，按日期从新到旧")
    assert r.intent == "detail" and r.limit == 10 and r.order == [("orders.ordered_at", "desc")]


def test_an_abbreviation_reads_as_the_word_a_name_is_made_of(knowledge: Knowledge) -> None:
    assert read(knowledge, "avg list price of goods").measures == ["goods.avg_price"]


def test_sorted_by_a_word_of_one_columns_title_sorts_by_that_column(knowledge: Knowledge) -> None:
    r = read(knowledge, "customers in Paris with account balance over 1000, sorted by balance")
    assert r.order and r.order[0][0] == "customers.balance" and not r.unknown and not r.unhonoured


def test_a_name_followed_by_a_word_for_spread_groups_by_it(knowledge: Knowledge) -> None:
    r = read(knowledge, "平均标价的品类分布")
    assert r.measures == ["goods.avg_price"] and r.dimensions == ["goods.category"] and not r.unknown


def test_the_chinese_head_of_a_row_count_name_names_the_cube(knowledge: Knowledge) -> None:
    r = read(knowledge, "2024年付款里金额最大的是多少？")
    assert r.measures == ["payments.largest"] and not r.dimensions and not r.unknown


def test_a_superlative_before_an_average_asks_the_extreme_of_one_row_when_nothing_is_grouped(
    knowledge: Knowledge,
) -> None:
    r = read(knowledge, "the highest average list price of goods")
    assert not r.measures and r.refusal and "maximum" in r.refusal  # the model has no max of it: said


def test_dollar_signs_are_a_word_for_money(knowledge: Knowledge) -> None:
    assert read(knowledge, "total $$ of payments in 2024").measures == ["payments.paid"]


def test_a_count_word_beside_a_group_by_a_column_counts_the_rows_of_its_cube(knowledge: Knowledge) -> None:
    r = read(knowledge, "how many are there for each operator?")
    assert r.measures == ["trips.count"] and r.dimensions == ["trips.operator"]


def test_a_share_of_compared_values_is_of_every_rows_total(knowledge: Knowledge) -> None:
    r = read(knowledge, "what share of trips in 2024 were by owl or bat?")
    assert r.share and r.keep == {"trips.operator": ["owl", "bat"]} and r.dimensions == ["trips.operator"]
    assert not [f for f in r.filters if f.member == "trips.operator"]


def test_values_after_ie_restate_the_segment_before_them(knowledge: Knowledge) -> None:
    r = read(knowledge, "what share of trips in 2024 were night trips, i.e. owl or bat?")
    assert r.part_segments == ["trips.night"] and not r.filters and not r.dimensions and not r.unknown


def test_the_whole_catalogue_says_nothing(knowledge: Knowledge) -> None:
    r = read(knowledge, "average list price of goods over the whole catalogue")
    assert r.measures == ["goods.avg_price"] and not r.unknown


def test_a_bound_in_milliseconds_is_converted_to_the_columns_unit(knowledge: Knowledge) -> None:
    r = read(knowledge, "trips with a ride time over 600000 ms")  # "ms" once raised KeyError('m')
    assert [(f.member, f.operator, f.values) for f in r.filters] == [("trips.ride_time", "gt", ["10"])]


def test_a_named_column_with_a_direction_closes_a_question_as_its_order(knowledge: Knowledge) -> None:
    r = read(knowledge, "goods priced over 5, price high to low")  # not a list of two columns
    assert r.order == [("goods.price", "desc")] and not r.column_list and not r.unknown


def test_a_duration_that_names_no_column_of_several_in_minutes_is_refused(knowledge: Knowledge) -> None:
    r = read(knowledge, "trips that ran over 50 minutes")  # start delay, end delay or ride time: no guess
    assert not r.filters and (r.refusal or r.unhonoured)


def test_an_each_no_group_took_leaves_the_total_unhonoured(knowledge: Knowledge) -> None:
    r = read(knowledge, "total distance of trips for each of them")
    assert r.measures == ["trips.total_distance"] and not r.dimensions and r.unhonoured == ["for each"]


def test_a_number_before_a_superlative_counts_rows_and_is_no_value(knowledge: Knowledge) -> None:
    r = read(knowledge, "list the 5 longest start delays of trips")
    assert not [f for f in r.filters if f.values == ["5"]] and r.limit == 5


def test_late_by_minutes_picks_the_delay_its_verb_names_not_the_unit_both_titles_share(knowledge: Knowledge) -> None:
    r = read(knowledge, "how many trips ending more than 15 minutes late")
    assert [(f.member, f.values) for f in r.filters] == [("trips.end_delay", ["15"])]


def test_a_cube_word_of_its_key_with_de_names_the_key(knowledge: Knowledge) -> None:
    r = read(knowledge, "把职员的编号列出来")
    assert r.listing == "staff" and "staff.staff_id" in r.columns and not r.unknown
