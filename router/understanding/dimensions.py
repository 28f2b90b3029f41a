"""Group-by mentions: "by region", "per channel", "top 5 products by turnover", "which category ...",
"按地区", "各渠道", "每个品类", "哪个城市". Concepts are raw words; the aggregate path resolves them to
model members (a mention that names a measure, as in "by turnover", is dropped there).
"""

from __future__ import annotations

import re

from router.understanding.terms import segment
from router.understanding.types import DimensionMention

_GRAINS = {
    "day",
    "week",
    "month",
    "quarter",
    "year",
    "date",
    "time",
    "hour",
    "天",
    "日",
    "周",
    "月",
    "季度",
    "季",
    "年",
    "月份",
    "年度",
    "星期",
}
_EN_STOP = {
    "the",
    "a",
    "an",
    "of",
    "in",
    "on",
    "at",
    "for",
    "to",
    "from",
    "with",
    "and",
    "or",
    "by",
    "has",
    "had",
    "have",
    "is",
    "was",
    "were",
    "are",
    "did",
    "does",
    "do",
    "sold",
    "made",
    "last",
    "this",
    "that",
    "than",
    "generated",
    "drove",
    "brought",
    "most",
    "highest",
    "lowest",
    "top",
    "bottom",
    "between",
    "vs",
    "during",
    "each",
    "per",
    "its",
    "their",
    "total",
    "all",
    "show",
    "list",
    "what",
    "which",
    "over",
    "across",
}
_WORD = r"[A-Za-z][A-Za-z_\-]*"
_EN_PATTERNS = [
    re.compile(
        rf"\b(?:by|per|for each|for every|each|across|broken down by|split by|grouped by|group by|across all)"
        rf"\s+(?:the\s+|each\s+|every\s+)?({_WORD}(?:\s+{_WORD})?)",
        re.IGNORECASE | re.ASCII,
    ),
    re.compile(
        rf"\b(?:top|bottom|best|worst|highest|lowest|largest|biggest)(?:[\s-]+(?:selling|performing|grossing))?"
        rf"[\s-]*(?:\d+|[a-z]+)?\s+({_WORD}(?:\s+{_WORD})?)\s+(?:by|with|in|for|of)\b",
        re.IGNORECASE | re.ASCII,
    ),
    re.compile(
        rf"\b(?:which|what)\s+({_WORD}(?:\s+{_WORD})?)\s+(?:has|had|have|is|was|were|are|did|does|sold|made|"
        rf"generated|brought|drove|with|got|saw|shows?)\b",
        re.IGNORECASE | re.ASCII,
    ),
]
_ZH_TRIGGERS = {"按", "按照", "各", "每个", "每一个", "分", "不同", "哪个", "哪些", "哪一个", "哪一", "各个", "哪"}
_ZH_AFTER = {"分布", "维度", "分组", "构成"}
# "前10的供应商", "最多的3个国家", "营业额最高的5个账户": the noun after a ranked count
_ZH_RANKED = re.compile(
    r"(?:前\s*[\d一二三四五六七八九十]+\s*(?:名|位|个|大|款|家)?|"
    r"[\d一二三四五六七八九十两]+\s*(?:个|家|款|位|大))\s*的?\s*([\u4e00-\u9fff]{2,4}?)(?=[的,.?和及与以并]|$|\s)"
)
_ZH_SUFFIX = {"方式", "方法", "类型", "原因", "状态", "分类", "类别", "渠道", "等级", "名称", "分层", "分群", "层级"}


def _singular(word: str) -> str:
    lower = word.lower()
    if lower.endswith("ies") and len(lower) > 4:
        return lower[:-3] + "y"
    if lower.endswith("s") and not lower.endswith(("ss", "us", "is")) and len(lower) > 3:
        return lower[:-1]
    return lower


def _en_concept(phrase: str) -> str | None:
    words = []
    for word in phrase.split():
        if word.lower() in _EN_STOP:
            break
        words.append(word)
    if not words:
        return None
    words[-1] = _singular(words[-1])
    concept = " ".join(w.lower() for w in words)
    return None if concept in _GRAINS else concept


def extract_dimensions(text: str) -> list[DimensionMention]:
    """Group-by mentions in order of appearance, de-duplicated by concept."""
    found = _en_mentions(text)
    if re.search(r"[\u4e00-\u9fff]", text):
        found += _zh_mentions(text)
    seen: set[str] = set()
    out = []
    for _, mention in sorted(found, key=lambda item: item[0]):
        if mention.concept not in seen:
            seen.add(mention.concept)
            out.append(mention)
    return out


def _en_mentions(text: str) -> list[tuple[int, DimensionMention]]:
    """(position, mention) of "by region", "top 5 products by ...", "which category has ..."."""
    found: list[tuple[int, DimensionMention]] = []
    for pattern in _EN_PATTERNS:
        for m in pattern.finditer(text):
            concept = _en_concept(m.group(1))
            if concept:
                found.append((m.start(), DimensionMention(concept, m.group(0))))
    return found


def _zh_mentions(text: str) -> list[tuple[int, DimensionMention]]:
    """(position, mention) of the noun after a ranked count ("前10的供应商") and of the jieba tokens a trigger
    word ("按", "各", "哪个") or an after-word ("分布") marks."""
    found: list[tuple[int, DimensionMention]] = []
    for m in _ZH_RANKED.finditer(text):
        if m.group(1) not in _GRAINS:
            found.append((m.start(1), DimensionMention(m.group(1), m.group(0))))
    tokens = segment(text)
    offset = 0
    for i, token in enumerate(tokens):
        position = text.find(token, offset)
        offset = position + len(token) if position >= 0 else offset
        target = _zh_target(tokens, i)
        if target and target not in _GRAINS and re.fullmatch(r"[\u4e00-\u9fff]{1,6}|[A-Za-z]+", target):
            phrase = target + token if token in _ZH_AFTER else token + target
            found.append((position, DimensionMention(target.lower(), phrase)))
    return found


def _zh_target(tokens: list[str], i: int) -> str | None:
    """The group-by noun token ``i`` marks: the next token after a trigger ("按 地区", "各 个 渠道", with a
    suffix such as "方式"), the previous one before an after-word ("渠道 分布"), or the rest of "各地区"."""
    token = tokens[i]
    if token in _ZH_TRIGGERS and i + 1 < len(tokens):
        target = tokens[i + 1]
        nxt = i + 2
        if target in {"的", "个"} and nxt < len(tokens):
            target, nxt = tokens[nxt], nxt + 1
        if nxt < len(tokens) and tokens[nxt] in _ZH_SUFFIX:
            target += tokens[nxt]
        return target
    if token in _ZH_AFTER and i > 0:
        return tokens[i - 1].removesuffix("的")
    if len(token) >= 3 and token[0] in "各按" and token[1:] not in _GRAINS:
        return token[1:]
    return None
