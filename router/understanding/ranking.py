"""Top-N and order phrases: "top 5", "前10", "bottom 3", "highest", "最多", "lowest", "排名"."""

from __future__ import annotations

import re
from typing import Literal

from router.understanding._calendar import parse_number
from router.understanding.types import Ranking

_FLAGS = re.IGNORECASE | re.ASCII  # ASCII: \b must see Chinese characters as boundaries

DEFAULT_TOP = 10
_NUM = r"(\d+|[一二三四五六七八九十两百]+|one|two|three|four|five|six|seven|eight|nine|ten|twenty|fifty|hundred)"
_NOT_TIME = r"(?![\d一二三四五六七八九十两百])(?!\s*(?:天|日|周|个?月|个?星期|年|个?季度))"
_TOP = re.compile(
    rf"\btop[\s-]*{_NUM}?\b|(?:排名|排行)?前\s*{_NUM}{_NOT_TIME}\s*(?:名|位|个|大|款|家)?|{_NUM}\s*大", _FLAGS
)
_SUPERLATIVE_N = re.compile(
    rf"最(高|多|大|好|低|少|小|差|贵|便宜|长|短)的?\s*{_NUM}\s*"
    rf"(?:个|名|位|家|款|大|张|首|本|条|部|只|辆|架|种|笔|单)",
    _FLAGS,
)
_SUPERLATIVES_EN = "best|top|highest|largest|biggest|most|worst|bottom|lowest|smallest|least"
_SUPERLATIVE_EN_N = re.compile(
    rf"\b(?<!at )({_SUPERLATIVES_EN})"
    rf"(?:[\s-]+(?:selling|performing|grossing|rated|valued))?\s+{_NUM}\b",
    _FLAGS,
)
_N_SUPERLATIVE_EN = re.compile(rf"\b{_NUM}\s+({_SUPERLATIVES_EN})\b", _FLAGS)
# "10 longest tracks", "5 most expensive parts": any superlative after a number
_N_EST = re.compile(rf"\b{_NUM}\s+((?:most|least)\s+[a-z]+|[a-z]{{2,}}est)\b", _FLAGS)
_NOT_SUPERLATIVE = frozenset(
    {"interest", "request", "forest", "harvest", "guest", "west", "rest", "contest", "chest", "quest", "digest"}
)
_LOW_EST = re.compile(r"^(?:least\s|cheapest|smallest|lowest|shortest|earliest|oldest|fewest|slowest|lightest)")
_BOTTOM = re.compile(rf"\bbottom[\s-]*{_NUM}?\b|(?:倒数|后|末)\s*{_NUM}\s*(?:名|位|个)?", _FLAGS)
# "at least 40 claims" / "at most" bound a count; they rank nothing
_HIGH = re.compile(
    r"\b(?<!at )(?:highest|most|largest|biggest|best|top|greatest|maximum|max|longest|fastest|"
    r"heaviest|farthest|furthest|busiest|priciest|costliest)\b|"
    r"最高|最多|最大|最好|最畅销|最强|最繁忙|最忙|最长|最贵|最重|最快|最远|最久",
    _FLAGS,
)
_LOW = re.compile(
    r"\b(?<!at )(?:lowest|least|smallest|worst|fewest|minimum|min|shortest|cheapest|slowest|"
    r"closest|nearest|quietest)\b|最低|最少|最小|最差|垫底|最短|最便宜|最轻|最慢",
    _FLAGS,
)
_RANK = re.compile(r"\brank(?:ing|ed)?\b|\bsorted\b|\border(?:ed)? by\b|排名|排行|排序", _FLAGS)
# the measure words of Chinese that count one thing: "哪支球队", "哪名球员", "哪部电影" ask for one
ZH_CLASSIFIERS = "个一家位款种国支名只条本部首张场座所辆架艘件门篇台项届局间"
_SINGULAR = re.compile(
    r"\bwhich\b(?!\s+\w+s\b)|\bwhat (?:is|was) the\b|"
    rf"哪[{ZH_CLASSIFIERS}]|哪个?月",
    _FLAGS,
)
_PLURAL = re.compile(r"哪些|\bwhich\s+\w+s\b", _FLAGS)
_WHICH_N = re.compile(rf"\bwhich\s+{_NUM}\b|哪\s*{_NUM}\s*(?:个|家|款|位|名|种)", _FLAGS)
# "the 5 HOUSEHOLD customers in INDIA with the lowest balance": N rows, ranked by the superlative after them
_THE_N = re.compile(
    rf"\bthe\s+{_NUM}\b(?![-.,:/%]|\s*(?:percent|years?|months?|weeks?|days?|quarters?|hours?|"
    rf"minutes?)\b)",
    _FLAGS,
)


# a superlative of one period ("the worst day of 2013", "our best month ever", "最忙的一天"): one row
_ONE_PERIOD = re.compile(
    r"\s+(?:single\s+)?(?:day|date|week|month|quarter|year)\b(?!\s+of\s+(?:the\s+)?(?:week|month|year)\b)|"
    r"\S{0,4}的(?:一天|那天|一周|一个月|那个月|一个季度|一年)",
    re.IGNORECASE,
)
_THEN_FIRST = re.compile(r"(?:\s+[a-z]+){0,3}?\s+first\b", re.IGNORECASE)


def _superlative_n_zh(text: str) -> Ranking | None:
    """'最高的5个': a superlative with its N."""
    if m := _SUPERLATIVE_N.search(text):
        limit = parse_number(m.group(2))
        if limit and 0 < limit <= 1000:
            return Ranking("asc" if m.group(1) in "低少小差" else "desc", limit, m.group(0))
    return None


def _superlative_n_en(text: str) -> Ranking | None:
    """'best 5', '5 worst': a superlative with its N ('top N' is left to :func:`_top_or_bottom`)."""
    for pattern, word, number in ((_SUPERLATIVE_EN_N, 1, 2), (_N_SUPERLATIVE_EN, 2, 1)):
        m = pattern.search(text)
        if not m or (pattern is _SUPERLATIVE_EN_N and m.group(word).lower() in ("top", "bottom")):
            continue
        limit = parse_number(m.group(number))
        if limit and 0 < limit <= 1000 and m.group(number).lower() not in ("a", "an"):
            low = m.group(word).lower() in ("worst", "bottom", "lowest", "smallest", "least")
            return Ranking("asc" if low else "desc", limit, m.group(0))
    m = _N_EST.search(text)
    limit = parse_number(m.group(1)) if m and m.group(2).lower() not in _NOT_SUPERLATIVE else None
    if m and limit and 0 < limit <= 1000:
        return Ranking("asc" if _LOW_EST.match(m.group(2).lower()) else "desc", limit, m.group(0))
    return None


_TOP_BOTTOM: tuple[tuple[re.Pattern[str], Literal["desc", "asc"]], ...] = ((_TOP, "desc"), (_BOTTOM, "asc"))


def _top_or_bottom(text: str) -> Ranking | None:
    """'top 5', '前10', 'bottom 3', bare 'top' (the default N)."""
    for pattern, direction in _TOP_BOTTOM:
        for m in pattern.finditer(text):
            number = next((g for g in m.groups() if g), None)
            limit = parse_number(number) if number else None
            if number is None and direction == "desc" and not re.match(r"top", m.group(0), _FLAGS):
                continue
            if limit is None and number is not None:
                continue
            if limit is not None and not 0 < limit <= 1000:
                continue
            return Ranking(direction, limit or DEFAULT_TOP, m.group(0).strip())
    return None


def _which_n(text: str) -> Ranking | None:
    """'which 3 ... the lowest', 'the 5 ... with the highest': N rows ranked by a superlative elsewhere."""
    if (m := _WHICH_N.search(text) or _THE_N.search(text)) and (_LOW.search(text) or _HIGH.search(text)):
        limit = parse_number(next(g for g in m.groups() if g))
        if limit and 0 < limit <= 1000:
            return Ranking("asc" if _LOW.search(text) else "desc", limit, m.group(0))
    return None


_LOW_HIGH: tuple[tuple[re.Pattern[str], Literal["desc", "asc"]], ...] = ((_LOW, "asc"), (_HIGH, "desc"))


def _superlative(text: str) -> Ranking | None:
    """A superlative or an order word without N: one row ('which'), the default N (plural) or all rows."""
    # "which customers spent the most": the top ten, not every customer ranked
    single = (
        1 if _SINGULAR.search(text) and not _PLURAL.search(text) else (DEFAULT_TOP if _PLURAL.search(text) else None)
    )
    for pattern, direction in _LOW_HIGH:
        for said in pattern.finditer(text):
            if not _THEN_FIRST.match(text, said.end()):  # "cheapest first" orders the rows: it ranks none out
                one = _ONE_PERIOD.match(text, said.end())  # "our best month ever": one month
                return Ranking(direction, 1 if one else single, said.group(0))
    if rank := _RANK.search(text):
        return Ranking("desc", None, rank.group(0))
    return None


_STEPS = (_superlative_n_zh, _superlative_n_en, _top_or_bottom, _which_n, _superlative)


def extract_ranking(text: str) -> Ranking | None:
    """The ranking asked for, if any (first match: explicit N beats superlatives)."""
    for step in _STEPS:
        if (ranking := step(text)) is not None:
            return ranking
    return None
