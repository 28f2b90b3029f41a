"""Measures named in other words: the question's words against each measure's title, name and synonyms.

Engine R binds a measure only when the question holds one of its names whole ("late shipment rate").
Analysts say "customers that currently have a negative account balance" for a measure titled
"Customers with a negative balance", or "the biggest single invoice" for "Largest invoice". This pass
scores every public measure of the model by the share of its name's words the question holds:

- words are normalised (lower case, singular) and stop words dropped; the words of aggregation are folded
  into one token per kind, so "biggest", "largest", "highest" and "longest" all say MAX, and "distinct",
  "different" and "unique" say DISTINCT;
- Chinese names (titles or ``meta.synonyms``) match as substrings of the question;
- a name matches when the question holds all its words; a match of two or more words (an aggregation
  word that fits the measure's type counts as one) is *strong* (it wins over counting a bound table), unless
  every matched word only names a table ("artists with albums" is no measure of "which artists have the most
  albums": that is albums counted per artist); a one-word match is *weak*: used only when nothing else names
  a measure, and never for a count (one word naming a table is the count path's to decide);
- among equal matches the measure whose type fits the question's aggregation words wins ("how many
  different ..." a distinct count), then the unit the question names ("in minutes"), then the name whose
  words the question holds literally ("highest list price" over "max list price"), then the shorter name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from cube_models.model import SemanticModel
from fourengine.terms import STOPWORDS, has_cjk, words
from router.aggregate.context import Binding
from router.aggregate.members import known_member

_FLAGS = re.IGNORECASE
_KINDS = {  # aggregation words -> the token they fold to, and the measure types that token fits
    "MAX": (r"max|maximum|largest|biggest|highest|longest|greatest|peak", ("max",)),
    "MIN": (r"min|minimum|smallest|lowest|shortest|least|cheapest", ("min",)),
    "AVG": (r"average|avg|mean|typical", ("avg", "number")),
    "DISTINCT": (r"distinct|different|unique", ("count_distinct", "count_distinct_approx")),
}
_COUNTING = re.compile(r"\bhow many\b|\bnumber of\b|\bcount\b|多少|几个|几家|几位|数量", _FLAGS)
_COUNT_TYPES = ("count", "count_distinct", "count_distinct_approx")
_KIND_WORD = {w: kind for kind, (alts, _) in _KINDS.items() for w in alts.split("|")}
_KIND_ZH = (
    ("MAX", re.compile(r"最大|最高|最长|最贵")),
    ("MIN", re.compile(r"最小|最低|最短|最便宜")),
    ("AVG", re.compile(r"平均|均值")),
    ("DISTINCT", re.compile(r"不同|去重|多少种|几种")),
)
_UNITS = {  # a unit the question names -> the words a measure's title uses for it
    "minute": re.compile(r"\bminutes?\b|\bmins?\b|分钟", _FLAGS),
    "hour": re.compile(r"\bhours?\b|小时", _FLAGS),
    "second": re.compile(r"\bseconds?\b|\bsecs?\b|秒", _FLAGS),
    "day": re.compile(r"\bdays?\b|天", _FLAGS),
    "ms": re.compile(r"\bms\b|milliseconds?|毫秒", _FLAGS),
    "mb": re.compile(r"\bmb\b|megabytes?|兆", _FLAGS),
    "byte": re.compile(r"\bbytes?\b|字节", _FLAGS),
    "percent": re.compile(r"percent|%|百分", _FLAGS),
}
_GENERIC = STOPWORDS | {"count", "total", "sum", "amount", "value", "rate", "share", "per", "each", "all", *_KINDS}


@dataclass(frozen=True)
class MeasureMatch:
    path: str
    words: tuple[str, ...]  # the question's (folded) words the name matched
    strong: bool


def _tokens(text: str) -> list[str]:
    return [_KIND_WORD.get(w, w) for w in words(text.lower()) if w not in STOPWORDS]


def _table_words(model: SemanticModel) -> set[str]:
    """The words of the cubes' names and titles: words that name a table, not a measure."""
    return {
        w
        for cube in model.cubes.values()
        for name in (cube.name.replace("_", " "), cube.title or "")
        for w in _tokens(name)
    }


def _literal(measure: Any, question_words: set[str]) -> int:
    """How many words of the measure's best name the question holds as written (not only folded)."""
    return max((len(set(words(name.lower())) & question_words) for name in _names(measure)), default=0)


def _names(measure: Any) -> list[str]:
    title = measure.title or ""
    bare = re.sub(r"\s*\([^)]*\)", "", title).strip()
    synonyms = [str(s) for s in (measure.meta or {}).get("synonyms") or [] if isinstance(s, str | int)]
    return [n for n in dict.fromkeys([title, bare, measure.name.replace("_", " "), *synonyms]) if n]


def _name_match(name: str, question: str, tokens: set[str]) -> tuple[str, ...] | None:
    """The words of ``name`` found in the question, when all of them are."""
    if has_cjk(name):
        return (name,) if name in question else None
    wanted = [w for w in _tokens(name) if w]
    if not wanted or not set(wanted) <= tokens or set(wanted) <= _GENERIC:
        return None
    return tuple(wanted)


def _fits(measure: Any, kinds: set[str]) -> bool:
    return any(measure.type in (_COUNT_TYPES if k == "COUNT" else _KINDS[k][1]) for k in kinds)


def _unit_fit(measure: Any, question: str) -> bool:
    title = (measure.title or "").lower()
    return any(pattern.search(question) and pattern.search(title) for pattern in _UNITS.values())


def question_kinds(question: str) -> set[str]:
    """The aggregation kinds the question's words ask for (MAX, MIN, AVG, DISTINCT, COUNT)."""
    kinds = {_KIND_WORD[w] for w in words(question.lower()) if w in _KIND_WORD}
    kinds |= {"COUNT"} if _COUNTING.search(question) else set()
    return kinds | {kind for kind, pattern in _KIND_ZH if pattern.search(question)}


def match_measure(model: SemanticModel, question: str) -> MeasureMatch | None:
    """The measure whose name the question holds most completely (see the module docstring)."""
    tokens = set(_tokens(question))
    kinds = question_kinds(question)
    lowered = question.lower()
    as_written = set(words(lowered)) - STOPWORDS
    tables = _table_words(model)
    best: tuple[tuple[int, bool, bool, int, int], MeasureMatch] | None = None
    for cube in model.cubes.values():
        for measure in cube.measures.values():
            if not measure.public:
                continue
            found = [m for name in _names(measure) if (m := _name_match(name, lowered, tokens))]
            if not found:
                continue
            matched = max(found, key=len)
            fits = _fits(measure, kinds)
            kind_fit = fits and bool(set(matched) & set(_KINDS))
            content = [w for w in matched if w not in _GENERIC]
            strength = len(content) + (2 if has_cjk(matched[0]) else 0) + (1 if kind_fit else 0)
            if content and set(content) <= tables and not kind_fit and not has_cjk(matched[0]):
                strength = min(strength, 1)  # only table words: which table to count, not which measure
            rank = (
                min(strength, 4),
                fits,
                _unit_fit(measure, lowered),
                _literal(measure, as_written),
                -len(measure.title or ""),
            )
            if best is None or rank > best[0]:
                best = (rank, MeasureMatch(measure.path, matched, strength >= 2))
    if best and not best[1].strong and getattr(model.find_member(best[1].path), "type", None) in _COUNT_TYPES:
        return None  # one word naming a table: counting it is the count path's decision, not a name match
    return best[1] if best else None


def unit_twin(model: SemanticModel, path: str, question: str) -> str:
    """The measure of the same cube and name that is in the unit the question names ("average track length
    in minutes" -> the minutes twin of the milliseconds measure); ``path`` when there is none."""
    member = model.find_member(path)
    if member is None or _unit_fit(member, question.lower()):
        return path
    bare = re.sub(r"\s*\([^)]*\)", "", member.title or "").strip().lower()
    for other in model.cubes[member.cube].measures.values():
        other_bare = re.sub(r"\s*\([^)]*\)", "", other.title or "").strip().lower()
        if other.path != path and bare and other_bare == bare and _unit_fit(other, question.lower()):
            return other.path
    return path


def name_binding(model: SemanticModel, question: str) -> Binding | None:
    """A strong name match as a metric binding (term ``name:<measure>``), so every later step (slot
    filling, guardrails, the LLM prompt) treats it as the metric the question names."""
    found = match_measure(model, question)
    if found is None or not found.strong:
        return None
    path = unit_twin(model, found.path, question)
    member = known_member(model, path)
    return Binding(f"name:{path}", member.title or member.name, "metric", f"metric:{path}", None, " ".join(found.words))
