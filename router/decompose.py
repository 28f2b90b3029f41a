"""RAG-Fusion: split a compound question into sub-queries (retrieved separately) and fuse the ranked
results with reciprocal-rank fusion.

Fast rules (documented choices):
- An aggregate clause joined to a detail clause ("top suppliers by turnover and their complaint reasons",
  "德国营业额最高的供应商以及投诉原因") -> two sub-queries: aggregate, then detail (``depends_on`` = 0; the
  pronoun "their/其" is dropped).
- A comparison of coordinated members ("compare turnover of 德国 and 法国 by month", "德国和法国的营业额对比")
  -> one sub-query per member, the comparison word removed. Coordinated time periods are not split
  (the same terms retrieve the same context; the aggregate path makes one query per period).
- Coordinated metrics without a comparison word ("turnover and invoice count in March 2024") stay ONE
  sub-query: both terms bind in one retrieval and go into one Cube query with two measures.
- Anything else -> the whole question as the single sub-query.
LLM mode: one DSPy call returning the sub-queries and their kinds; falls back to the rules on failure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from cubesage_core.llm import two_mode
from router.intent import _lexicon as lex
from router.understanding.terms import extract_terms
from router.understanding.timeexpr import extract_time
from router.understanding.types import Understanding

_FLAGS = re.IGNORECASE | re.ASCII  # ASCII: \b must see Chinese characters as boundaries

SubQueryKind = Literal["aggregate", "detail", "any"]
MAX_SUB_QUERIES = 6
_PRONOUNS = re.compile(r"\b(?:their|its|his|her|them|those|these)\b|它们的|他们的|他的|她的|及其|其", _FLAGS)
_COMPARE_WORDS = re.compile(r"\b(?:compare|comparing|comparison of|versus)\b|对比一下|对比|比较|相比", _FLAGS)
_COORD_EN = re.compile(
    r"(?P<a>[A-Z][\w\-]*(?: [A-Z0-9][\w\-]*){0,3}|[\u4e00-\u9fff]{2,8}|[a-z][\w\-]*)"
    r"\s*(?:,\s*)?\s+(?:and|vs\.?|versus|or)\s+"
    r"(?P<b>[A-Z][\w\-]*(?: [A-Z0-9][\w\-]*){0,3}|[\u4e00-\u9fff]{2,8}|[a-z][\w\-]*)"
)
# the second member ends before 的, a stop, a comparison word, a place suffix or a switch from Chinese to Latin
_COORD_ZH = re.compile(
    r"(?P<a>[\u4e00-\u9fffA-Za-z0-9]{2,8}?)\s*(?:和|与|跟|、|及|vs\.?|VS)\s*"
    r"(?P<b>[\u4e00-\u9fffA-Za-z0-9]{2,8}?)"
    r"(?=的|[\s,.?]|地区|$|对比|比较|相比|(?<=[\u4e00-\u9fff])[A-Za-z])"
)


@dataclass
class SubQuery:
    text: str
    kind: SubQueryKind = "any"
    focus: str = ""  # the member or clause this part is about
    depends_on: int | None = None  # index of the sub-query whose result this one refers to
    search_terms: list[str] = field(default_factory=list)
    source: str = "rule"  # rule | llm | whole


def _sub(
    text: str, kind: SubQueryKind, focus: str = "", depends_on: int | None = None, source: str = "rule"
) -> SubQuery:
    text = re.sub(r"\s+", " ", text).strip(" ,.")
    focus = re.sub(r"\s+", " ", focus).strip(" ,.")
    return SubQuery(text, kind, focus, depends_on, extract_terms(text), source)


def _clause_split(text: str) -> list[SubQuery] | None:
    m = lex.CLAUSE_JOIN.search(text)
    if not m:
        return None
    first, second = text[: m.start()], text[m.start() :]
    second = lex.LEADING_JOIN.sub("", _PRONOUNS.sub(" ", second))
    if not first.strip() or not second.strip():
        return None
    agg_first = bool(lex.AGGREGATION.search(first))
    # the second clause is about rows: detail words, or a pronoun for the first clause's rows ("their claims")
    detail_second = bool(lex.DETAIL.search(second) or _PRONOUNS.search(text[m.start() :]))
    if not (agg_first and detail_second):
        return None
    return [_sub(first, "aggregate", first.strip()), _sub(second, "detail", second.strip(), depends_on=0)]


def _is_time(text: str, u: Understanding) -> bool:
    return bool(extract_time(text, u.today).ranges)


def _member_split(u: Understanding) -> list[SubQuery] | None:
    if not (u.comparison or _COMPARE_WORDS.search(u.normalized)):
        return None
    text = re.sub(r"\s+", " ", _COMPARE_WORDS.sub(" ", u.normalized)).strip()
    for pattern in (_COORD_ZH, _COORD_EN) if u.language == "zh" else (_COORD_EN, _COORD_ZH):
        m = pattern.search(text)
        if not m:
            continue
        a, b = m.group("a").strip(), m.group("b").strip()
        if _is_time(a, u) or _is_time(b, u):
            continue
        parts = []
        for member in (a, b):
            replaced = text[: m.start()] + member + text[m.end() :]
            parts.append(_sub(replaced, "aggregate", member))
        return parts
    return None


class _Decompose:
    """Lazily built DSPy signature (keeps dspy out of the fast path's import time)."""

    @staticmethod
    @lru_cache(maxsize=1)
    def signature() -> type:
        import dspy

        class DecomposeQuestion(dspy.Signature):
            """Split a compound warehouse question into independent sub-queries for retrieval: one per
            compared member, and separate aggregate (numbers) and detail (rows/entities) parts. Return the
            question itself as the only sub-query when it is not compound."""

            question: str = dspy.InputField()
            sub_queries: list[str] = dspy.OutputField(desc="1-4 self-contained sub-queries, question language")
            kinds: list[Literal["aggregate", "detail", "any"]] = dspy.OutputField(desc="one kind per sub-query")

        return DecomposeQuestion

    @staticmethod
    def run(question: str) -> list[SubQuery]:
        import dspy

        prediction = dspy.Predict(_Decompose.signature())(question=question)
        texts = [str(t).strip() for t in prediction.sub_queries if str(t).strip()][:MAX_SUB_QUERIES]
        kinds = list(prediction.kinds)
        if not texts:
            raise ValueError("the LLM returned no sub-queries")
        if len(kinds) != len(texts):
            kinds = ["any"] * len(texts)
        return [_sub(t, k, source="llm") for t, k in zip(texts, kinds, strict=True)]


def decompose_fast(u: Understanding) -> list[SubQuery]:
    parts = _clause_split(u.normalized) or _member_split(u)
    if parts:
        return parts
    return [SubQuery(u.normalized, "any", "", None, list(u.search_terms), "whole")]


def decompose(understanding: Understanding, *, use_llm: bool | None = None) -> list[SubQuery]:
    """Sub-queries of the question (the whole question alone when it is not compound)."""
    return two_mode(
        lambda: _Decompose.run(understanding.normalized),
        lambda: decompose_fast(understanding),
        step="decompose",
        use_llm=use_llm,
    ).value


def _default_key(item: Any) -> Hashable:
    if isinstance(item, str | int):
        return item
    if isinstance(item, dict):
        return item.get("id") or item.get("asset_id") or item.get("chunk_id")
    for name in ("id", "asset_id", "chunk_id"):
        if hasattr(item, name):
            return getattr(item, name)
    asset = getattr(item, "asset", None)
    if asset is not None and hasattr(asset, "asset_id"):
        return asset.asset_id
    raise TypeError(f"cannot tell the id of {type(item).__name__}; pass key=")


def rrf_fuse(
    ranked_lists: Sequence[Sequence[Any]], k: int = 60, key: Callable[[Any], Hashable] | None = None
) -> list[tuple[Hashable, float]]:
    """Reciprocal-rank fusion: score(d) = sum over lists of 1 / (k + rank), ranks from 1.

    Items are ids, dicts with ``id``/``asset_id``/``chunk_id``, or objects with such an attribute (or
    ``.asset.asset_id``); duplicates inside one list count once (best rank). Returns (id, score) pairs,
    best first; ties keep first-seen order.
    """
    if k < 0:
        raise ValueError("k must be >= 0")
    key = key or _default_key
    scores: dict[Hashable, float] = {}
    for ranked in ranked_lists:
        seen: set[Hashable] = set()
        for rank, item in enumerate(ranked, start=1):
            ident = key(item)
            if ident in seen:
                continue
            seen.add(ident)
            scores[ident] = scores.get(ident, 0.0) + 1.0 / (k + rank)
    order = {ident: i for i, ident in enumerate(scores)}
    return sorted(scores.items(), key=lambda pair: (-pair[1], order[pair[0]]))
