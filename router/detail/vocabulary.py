"""Matching the words of a detail question: value words, head nouns, named tables, row limits.

Which words name which tables and column values is data (``router.detail.schema.DetailCatalog``,
derived from the Cube model and a vocabulary file); this module holds the generic phrasing
("which table ...", "the latest 5 ...", "the x_y table") in English and Chinese.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class ValueWord:
    table: str
    column: str
    value: str
    pattern: re.Pattern[str]


def word_pattern(words: list[str], *, spaced: bool = False) -> re.Pattern[str]:
    """A case-insensitive pattern matching any of ``words``: Latin words on word boundaries, others anywhere;
    ``spaced``: a space or underscore between words matches either ("invoice lines", "invoice_lines")."""
    alternatives = []
    for word in dict.fromkeys(w.strip() for w in words if w and w.strip()):
        body = re.escape(word)
        if spaced:
            body = re.sub(r"(?:\\ |_)", "[ _]", body)
        start = r"\b" if word[0].isascii() and word[0].isalnum() else ""
        end = r"\b" if word[-1].isascii() and word[-1].isalnum() else ""
        alternatives.append(f"{start}{body}{end}")
    return re.compile("|".join(dict.fromkeys(alternatives)) or r"(?!x)x", re.IGNORECASE | re.ASCII)


TABLE_LOOKUP = re.compile(
    r"\b(which|what) tables?\b|\bwhere (is|are|can i find)\b.*\b(stored|kept)\b|哪(个|张|些)表|什么表|存在哪",
    re.I | re.A,
)

# "the employee_salaries table", "table hr.salaries", "salary_records表": a table named by identifier
NAMED_TABLE = re.compile(r"\btable\s+([A-Za-z_][\w.]*_[\w.]*)|([A-Za-z_][\w.]*_[\w.]*)\s*(?:table\b|表)", re.I | re.A)

DETAILS_OF = re.compile(r"\bdetails?\b|\bprofile\b|\binfo(rmation)?\b|详情|信息|资料", re.I | re.A)


def value_filters(text: str, words: tuple[ValueWord, ...]) -> list[ValueWord]:
    """Column-value filters named in ``text`` (one per table column; the first listed word wins)."""
    seen: set[tuple[str, str]] = set()
    out: list[ValueWord] = []
    for word in words:
        key = (word.table, word.column)
        if key not in seen and word.pattern.search(text):
            seen.add(key)
            out.append(word)
    return out


def target_table(
    text: str, nouns: tuple[tuple[str, re.Pattern[str]], ...], derived: tuple[tuple[str, re.Pattern[str]], ...] = ()
) -> str | None:
    """The table whose rows the question lists, from its head noun (None when no noun names one):
    the first of the ordered ``nouns`` that matches, else the ``derived`` noun earliest in the text."""
    for table, pattern in nouns:
        if pattern.search(text):
            return table
    hits = [(m.start(), -len(m.group(0)), table) for table, pattern in derived if (m := pattern.search(text))]
    return min(hits)[2] if hits else None


_NUM_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "five": 5,
    "ten": 10,
    "一": 1,
    "两": 2,
    "二": 2,
    "三": 3,
    "五": 5,
    "十": 10,
}
ROW_LIMIT = re.compile(
    r"\b(?:latest|last|most recent|recent|first|newest|top)\s+(\d+|one|two|three|five|ten)\b"
    r"|最近\s*(\d+|[一两二三五十])\s*(?:笔|条|个|单|次)|前\s*(\d+)\s*(?:笔|条|单)"
    r"|\b(\d+|one|two|three|five|ten)\s+(?:latest|most recent|newest|last)\b",
    re.I | re.A,
)
# "payments of invoice 8579", "invoice #8579", "发票8579": a row named by its key after a noun of its table
# (a year or a month is no key); the nouns are the catalog's (``key_reference``)
_KEY_AFTER_LATIN = r"\s*(?:#|no\.?|number|id)?\s*(\d+)\b(?!\s*(?:年|月))"
_KEY_AFTER_CJK = r"\s*(?:号|编号|#)?\s*(\d{3,})(?![\d年月])"


def key_reference(nouns: list[str]) -> re.Pattern[str]:
    """A pattern of one of ``nouns`` followed by a row key (the key is the one group that matched)."""
    words = sorted({n.strip() for n in nouns if n and n.strip()}, key=len, reverse=True)
    latin = "|".join(re.sub(r"(?:\\ |_)", "[ _]", re.escape(w)) for w in words if w.isascii())
    cjk = "|".join(re.escape(w) for w in words if not w.isascii())
    parts = ([rf"\b(?:{latin}){_KEY_AFTER_LATIN}"] if latin else []) + ([rf"(?:{cjk}){_KEY_AFTER_CJK}"] if cjk else [])
    return re.compile("|".join(parts) or r"(?!x)x", re.IGNORECASE)


def id_references(text: str, patterns: tuple[tuple[str, re.Pattern[str]], ...]) -> list[tuple[str, int, str]]:
    """(table, key, phrase) of every row the question names by its key, in the order of the text; of two
    overlapping phrases the earlier (then the longer) one counts."""
    found = sorted(
        (m.start(), -len(m.group(0)), table, m) for table, pattern in patterns for m in pattern.finditer(text)
    )
    out, end = [], 0
    for start, _, table, m in found:
        if start >= end:
            out.append((table, int(next(g for g in m.groups() if g)), m.group(0).strip()))
            end = m.end()
    return out


_AMOUNT = r"(\d[\d,]*(?:\.\d+)?)"
_NOT_AMOUNT_EN = r"(?!\s*(?:%|percent|items?|units?|lines?|days?|weeks?|months?|quarters?|years?|times?|rows?)\b)"
_NOT_AMOUNT_ZH = r"(?!\s*(?:%|笔|单|个|件|次|天|日|周|月|季|年|条|位|名))"
THRESHOLD_EN = re.compile(
    r"\b(over|above|more than|greater than|exceeding|at least|no less than|under|below|less than|at most|"
    rf"no more than)\s+(?:(?:rmb|cny|usd|yuan)\s*|[$¥]\s*)?{_AMOUNT}\s*(k|thousand)?\b{_NOT_AMOUNT_EN}",
    re.IGNORECASE,
)
THRESHOLD_ZH_BEFORE = re.compile(
    rf"(超过|大于|高于|多于|不低于|不少于|至少|低于|小于|少于|不超过|不高于|至多)\s*{_AMOUNT}\s*(万|千)?{_NOT_AMOUNT_ZH}"
)
THRESHOLD_ZH_AFTER = re.compile(rf"{_AMOUNT}\s*(万|千)?\s*元?\s*(以上|以下)")
_OPS = {
    "over": ">",
    "above": ">",
    "more than": ">",
    "greater than": ">",
    "exceeding": ">",
    "at least": ">=",
    "no less than": ">=",
    "under": "<",
    "below": "<",
    "less than": "<",
    "at most": "<=",
    "no more than": "<=",
    "超过": ">",
    "大于": ">",
    "高于": ">",
    "多于": ">",
    "不低于": ">=",
    "不少于": ">=",
    "至少": ">=",
    "低于": "<",
    "小于": "<",
    "少于": "<",
    "不超过": "<=",
    "不高于": "<=",
    "至多": "<=",
    "以上": ">=",
    "以下": "<=",
}
_SCALE = {"k": 1e3, "thousand": 1e3, "千": 1e3, "万": 1e4}


@dataclass(frozen=True)
class Threshold:
    """An amount bound the question puts on the rows ("claims over 1000", "5000元以上")."""

    op: str  # > | >= | < | <=
    value: float
    phrase: str


def threshold(text: str, counted: tuple[re.Pattern[str], ...] = ()) -> Threshold | None:
    """The first amount comparison of ``text``; counts ("more than 5 orders": a number before one of the
    ``counted`` nouns, the tables' own) and periods are not amounts."""
    for m in THRESHOLD_EN.finditer(text):
        after = len(text) - len(text[m.end() :].lstrip())  # the first word after the number
        if not any(noun.match(text, after) for noun in counted):
            return _threshold(m.group(1), m.group(2), m.group(3), m.group(0))
    if zh_before := THRESHOLD_ZH_BEFORE.search(text):  # Chinese counts take a measure word (5笔, 15个)
        return _threshold(zh_before.group(1), zh_before.group(2), zh_before.group(3), zh_before.group(0))
    if zh_after := THRESHOLD_ZH_AFTER.search(text):
        return _threshold(zh_after.group(3), zh_after.group(1), zh_after.group(2), zh_after.group(0))
    return None


def _threshold(word: str, number: str, scale: str | None, phrase: str) -> Threshold:
    value = float(number.replace(",", "")) * _SCALE.get((scale or "").lower(), 1.0)
    return Threshold(_OPS[word.lower()], value, phrase.strip())


def row_limit(text: str) -> int | None:
    """ "the latest 5 invoices" / "最近5张发票" -> 5."""
    m = ROW_LIMIT.search(text)
    if m is None:
        return None
    token = next(g for g in m.groups() if g)
    return int(token) if token.isdigit() else _NUM_WORDS[token.lower()]


def unknown_table(text: str, known: frozenset[str]) -> str | None:
    """A table the question names by identifier that the warehouse (``known`` table/cube names) lacks."""
    for m in NAMED_TABLE.finditer(text):
        name = (m.group(1) or m.group(2)).lower().rsplit(".", 1)[-1]
        if name not in known:
            return name
    return None
