"""Gold vs answer comparison: cells, one-to-one rows, ORDER BY ... LIMIT order with ties, key columns."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from answer.regress_compare import Gold, assign, cell_matches, compare, gold_query, gold_result, key_column, row_matches

TOP = "SELECT p.product_name, SUM(i.amount) AS gmv FROM t GROUP BY p.product_name ORDER BY gmv DESC LIMIT 3"


def test_numbers_dates_and_counts() -> None:
    gold = Gold([[dt.date(2024, 3, 1), Decimal("1445445.94")], [dt.date(2024, 4, 1), Decimal("10")]], None)
    answer = [["2024-04-01T00:00:00.000", "10.0000001"], ["2024-03-01T00:00:00.000", 1445445.94]]
    assert compare(gold, answer) is None
    assert "row count" in compare(gold, answer[:1])
    assert "no answer row of its own" in compare(gold, [["2024-03-01", 1445445.94], ["2024-04-01", 11]])


def test_gold_subset_of_columns_matches_wider_answer() -> None:
    assert compare(Gold([[8579]], None), [[8579, "2024-05-01 10:00:00", "Li Wei", "refunded"]]) is None
    assert compare(Gold([["王芳"]], None), [["Wang Fang"]]) is not None


def test_one_answer_row_cannot_satisfy_two_gold_rows() -> None:
    gold = Gold([[100], [100.00001]], None)  # both gold rows match the first answer row within tolerance
    assert "no answer row of its own" in compare(gold, [[100, "a"], [7, "b"]])
    assert compare(gold, [[100, "a"], [100, "b"]]) is None


def test_assignment_finds_a_perfect_matching_when_greedy_would_not() -> None:
    gold = [[1], [1, 2]]  # greedy gives answer row 0 to gold row 0, leaving gold row 1 without a row
    answer = [[1, 2], [1, 3]]
    owner = assign(gold, answer)
    assert owner == [1, 0]
    assert compare(Gold(gold, None), answer) is None


def test_gold_query_finds_order_keys_of_the_outermost_select_only() -> None:
    assert gold_query(TOP).key_columns == (1,) and gold_query(TOP).limit == 3
    assert gold_query(TOP).sql.endswith("ORDER BY gmv DESC FETCH FIRST 3 ROWS WITH TIES")
    offset = "SELECT a FROM t ORDER BY a LIMIT 5 OFFSET 5"
    assert gold_query(offset).limit is None and gold_query(offset).sql == offset  # no ties run past an OFFSET
    assert gold_query("SELECT a, b FROM t ORDER BY 2 LIMIT 5").key_columns == (1,)
    assert gold_query("SELECT a FROM t ORDER BY a").key_columns is None  # no LIMIT: a set
    inner = "SELECT n FROM (SELECT r, COUNT(*) AS n FROM t GROUP BY r ORDER BY n DESC LIMIT 3) s"
    assert gold_query(inner).key_columns is None
    hidden = gold_query("SELECT o.order_id FROM o ORDER BY o.order_ts DESC LIMIT 5")
    assert hidden.width == 1 and hidden.key_columns == (1,) and "__order_0" in hidden.sql


def test_ordered_gold_needs_the_answer_in_order() -> None:
    gold = gold_result(gold_query(TOP), [["A", 30], ["B", 20], ["C", 10]])
    assert compare(gold, [["A", 30], ["B", 20], ["C", 10]]) is None
    problem = compare(gold, [["B", 20], ["A", 30], ["C", 10]])
    assert problem is not None and "out of order" in problem
    assert compare(Gold(gold.rows, None), [["B", 20], ["A", 30], ["C", 10]]) is None  # unordered gold


def test_ties_in_the_order_key_may_come_in_any_order() -> None:
    gold = gold_result(gold_query(TOP), [["A", 30], ["B", 20], ["C", 20]])
    assert compare(gold, [["A", 30], ["C", 20], ["B", 20]]) is None
    assert compare(gold, [["C", 20], ["A", 30], ["B", 20]]) is not None


TOP1 = "SELECT c.name, COUNT(*) AS orders FROM o JOIN c ON c.id = o.cid GROUP BY c.name ORDER BY orders DESC LIMIT 1"


def test_a_tie_at_the_limit_accepts_any_tied_row_or_all_of_them() -> None:
    gold = gold_result(gold_query(TOP1), [["Ann", 13], ["Bo", 13]])  # WITH TIES: both came back
    assert gold.tied and gold.required() == [] and gold.counts() == (1, 2)
    assert compare(gold, [["Bo", 13]]) is None
    assert compare(gold, [["Ann", 13]]) is None
    assert compare(gold, [["Bo", 13], ["Ann", 13]]) is None  # every tied row shown
    assert "none of the 2 tied gold rows" in compare(gold, [["Cy", 13]])  # a row outside the tie
    assert compare(gold, [["Bo", 12]]) is not None
    assert "row count" in compare(gold, [])


def test_a_tie_at_the_limit_still_needs_the_rows_above_the_cut_in_order() -> None:
    gold = gold_result(gold_query(TOP.replace("LIMIT 3", "LIMIT 2")), [["A", 30], ["B", 20], ["C", 20]])
    assert gold.required() == [0]
    assert compare(gold, [["A", 30], ["C", 20]]) is None
    assert compare(gold, [["A", 30], ["B", 20]]) is None
    assert "has no answer row" in compare(gold, [["B", 20], ["C", 20]])  # A is above the cut
    assert "out of order" in compare(gold, [["C", 20], ["A", 30]])
    untied = gold_result(gold_query(TOP.replace("LIMIT 3", "LIMIT 2")), [["A", 30], ["B", 20]])
    assert not untied.tied and compare(untied, [["A", 30], ["C", 20]]) is not None  # no tie: C is wrong


def test_a_tie_at_the_limit_of_key_rows() -> None:
    query = gold_query("SELECT o.order_id FROM o ORDER BY o.amount DESC LIMIT 2")
    gold = gold_result(query, [[1, 50], [2, 40], [3, 40]])
    assert key_column(gold, ["order_id"], [[1], [3]]) is None
    assert key_column(gold, ["order_id"], [[1], [2], [3]]) is None
    assert key_column(gold, ["order_id"], [[1], [4]]) is not None  # 4 is not tied at the cut
    assert key_column(gold, ["order_id"], [[2], [3]]) is not None  # 1 is above the cut
    assert key_column(gold, ["order_id"], [[3], [1]]) is not None  # out of order


def test_order_key_not_in_the_output_is_compared_by_value() -> None:
    query = gold_query("SELECT o.order_id FROM o ORDER BY o.order_ts DESC LIMIT 3")
    gold = gold_result(query, [[3, "2025-06-03"], [2, "2025-06-02"], [1, "2025-06-02"]])
    assert gold.rows == [[3], [2], [1]]
    assert key_column(gold, ["order_id"], [[3], [1], [2]]) is None  # 1 and 2 tie on order_ts
    problem = key_column(gold, ["order_id"], [[2], [3], [1]])
    assert problem is not None and "out of order" in problem


def test_key_column_needs_one_column_with_exactly_the_gold_keys() -> None:
    gold = Gold([[11], [12], [13]], None)
    columns = ["refund_id", "order_id"]
    assert key_column(gold, columns, [[13, 1], [11, 2], [12, 3]]) is None
    assert key_column(gold, columns, [[13, 1], [11, 2], [12, 3], [12, 3]]) is None  # compared as a set
    assert key_column(gold, columns, [[13, 11], [14, 12]]) is not None  # no single column has all three
    assert key_column(gold, columns, [[11, 1], [12, 2], [13, 3], [14, 4]]) is not None  # an extra key
    assert key_column(Gold([], None), columns, []) is None


@pytest.mark.parametrize(
    ("label", "start"),
    [
        ("1995", dt.date(1995, 1, 1)),
        ("1995年", dt.date(1995, 1, 1)),
        ("2024-03", dt.date(2024, 3, 1)),
        ("Q2 2024", dt.date(2024, 4, 1)),
        ("2024年3季度", dt.date(2024, 7, 1)),
    ],
)
def test_a_compared_periods_label_matches_its_start_date(label: str, start: dt.date) -> None:
    assert cell_matches(start, label) and not cell_matches(start + dt.timedelta(days=1), label)


def test_rows_stated_as_cut_pass_when_they_are_gold_keys_and_the_total_covers_the_gold() -> None:
    gold = gold_result(gold_query("SELECT refund_id FROM t"), [[11], [12], [13], [14]])
    columns = ["refund_id", "reason"]
    shown = [[13, "damaged"], [11, "other"]]
    assert key_column(gold, columns, shown) is not None  # silent: two of four keys is wrong
    assert key_column(gold, columns, shown, stated_total=4) is None  # "2 of 4 are shown"
    assert key_column(gold, columns, shown, stated_total=3) is not None  # the stated total misses a gold key
    assert key_column(gold, columns, [[13, "x"], [99, "y"]], stated_total=9) is not None  # 99 is no gold key


def test_a_gold_month_or_quarter_number_is_the_period_the_answer_shows_by_its_start() -> None:
    assert cell_matches(Decimal(6), "2013-06-01T00:00:00.000") and cell_matches(2, "2013-04-01")
    assert not cell_matches(5, "2013-06-01") and not cell_matches(2, "2013-05-01")
    assert not cell_matches(6, "2013-06-15") and not cell_matches(13, "2013-01-01")
    assert cell_matches(6, "June 2013") and cell_matches(2, "Q2 2013") and not cell_matches(7, "June 2013")


def test_a_one_row_gold_of_numbers_matches_one_answer_row_per_number() -> None:
    gold = Gold([[Decimal("80"), Decimal("78")]], None)  # this year's count, last year's, side by side
    assert compare(gold, [["this year", 80], ["same period last year", 78]]) is None
    assert compare(gold, [["this year", 80], ["same period last year", 77]]) is not None
    assert compare(gold, [["this year", 80], ["last year", 80]]) is not None  # one number twice is not both
    assert compare(Gold([[Decimal("80"), "x"]], None), [["a", 80], ["b", "x"]]) is not None  # numbers only


def test_a_one_row_gold_of_two_periods_and_their_difference_matches_a_row_per_period() -> None:
    gold = Gold([[Decimal("48.57"), Decimal("9.90"), Decimal("-38.67")]], None)
    assert compare(gold, [["2011", 9.90], ["2009", 48.57]]) is None
    assert compare(Gold([[Decimal("48.57"), Decimal("9.90"), Decimal("-30")]], None), [["a", 9.90], ["b", 48.57]])


def test_a_one_row_gold_of_two_periods_and_their_relative_change_matches_a_row_per_period() -> None:
    rows = [["2024", 150.0], ["2023", 120.0]]
    assert compare(Gold([[Decimal("120"), Decimal("150"), Decimal("0.25")]], None), rows) is None  # a ratio
    assert compare(Gold([[Decimal("120"), Decimal("150"), Decimal("25.0")]], None), rows) is None  # a percentage
    assert compare(Gold([[Decimal("120"), Decimal("150"), Decimal("0.3")]], None), rows)  # not their change


def test_a_period_label_matches_the_same_period_said_another_way() -> None:
    assert cell_matches("Q1 2013", "Q1 of 2013") and cell_matches("2024年", "2024")
    assert not cell_matches("Q1 2013", "Q3 2013")
    assert cell_matches("2024-01", "2024-01-01T00:00:00.000")  # a month shown by its start
    assert cell_matches("H1 1997", "1997年上半年") and cell_matches("h2 1997", "1997 H2")
    assert not cell_matches("H1 1997", "1997年下半年")
    assert cell_matches(2007, "2007-01-01T00:00:00.000") and not cell_matches(2007, "2008-01-01T00:00:00.000")
    assert not cell_matches("2024-01", "2024-02-01T00:00:00.000")


def test_a_number_the_gold_rounds_is_matched_by_any_number_rounding_to_it() -> None:
    query = gold_query("SELECT country, ROUND(AVG(total), 2) AS avg_total FROM invoices GROUP BY 1")
    gold = gold_result(query, [["Hungary", Decimal("6.52")]])
    assert compare(gold, [["Hungary", 6.517]]) is None
    assert compare(gold, [["Hungary", 6.526]]) is not None
    plain = gold_result(
        gold_query("SELECT country, AVG(total) FROM invoices GROUP BY 1"), [["Hungary", Decimal("6.52")]]
    )
    assert compare(plain, [["Hungary", 6.517]]) is not None  # not rounded: the usual tolerance


def test_an_answer_number_rounded_to_two_or_more_decimals_matches_its_gold() -> None:
    assert cell_matches(43.785083, 43.79) and cell_matches(0.123456, 0.1235)
    assert not cell_matches(43.785083, 43.8) and not cell_matches(43.785083, 43.78)
    assert cell_matches(5.396016, 5.4) and not cell_matches(5.43, 5.4)  # 5.40 with its trailing zero dropped


def test_a_gold_name_split_over_two_columns_matches_one_answer_column_holding_both() -> None:
    assert row_matches([1, "Luís", "Gonçalves", "São Paulo"], [1, "Luís Gonçalves", "Brazil", "São Paulo"])
    assert not row_matches([1, "Luís", "Gonçalves"], [1, "Luís Martins"])  # a different person
    assert row_matches([7, "EWR", "ORD"], [7, "N14228", "EWR-ORD"])  # a route: origin and destination
    assert not row_matches([1, "Luís", "São Paulo", "Gonçalves"], [1, "Luís Gonçalves", "São Paulo"])  # not beside


def test_a_period_label_followed_by_what_it_is_is_that_period() -> None:
    assert cell_matches("2010-11", "2010-11, same period last year") and cell_matches("2011-11 (last month)", "2011-11")
    assert cell_matches("2011-12", "2011-12（本月）") and not cell_matches("2010-11", "2010-12, last month")
