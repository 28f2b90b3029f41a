"""The time grain a question asks for and every span that asks it."""

from router.understanding.granularity import extract_granularity


def test_a_grain_said_twice_uses_both_spans() -> None:
    assert extract_granularity("每年卖出多少？按年份列出。", None) == ("year", [(0, 2), (7, 10)])
    assert extract_granularity("按月份统计", None) == ("month", [(0, 3)])
    assert extract_granularity("revenue by quarter", None) == ("quarter", [(8, 18)])
