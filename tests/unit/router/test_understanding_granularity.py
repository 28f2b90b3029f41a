"""The time grain a question asks for and every span that asks it."""

from router.understanding.granularity import extract_granularity


def test_a_grain_said_twice_uses_both_spans() -> None:
    assert extract_granularity("每年卖出多少？按年份列出。", None) == ("year", [(0, 2), (7, 10)])
    assert extract_granularity("按月份统计", None) == ("month", [(0, 3)])
    assert extract_granularity("revenue by quarter", None) == ("quarter", [(8, 18)])


def test_a_superlative_of_one_period_groups_by_that_grain() -> None:
    assert extract_granularity("What was our best month ever for sales?", None)[0] == "month"
    assert extract_granularity("the single worst day of 2013 for average delay", None)[0] == "day"
    assert extract_granularity("最忙的一天是哪天", None)[0] == "day"
    assert extract_granularity("the busiest day of the week", None)[0] is None  # a weekday cycle
