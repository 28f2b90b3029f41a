"""Fast (deterministic) intent rules: weighted EN/ZH cues and warehouse signals.

Decision order (documented rule):
1. ``unsupported`` when the question carries no warehouse evidence: nothing binds to the model (no
   metric, table, dimension or value binding, no entity row, no word about the warehouse itself) and no
   aggregation cue. Out-of-domain is the absence of a binding, never a topic list: a question about
   employees is answered where the model has employees. Table hits are context only: fuzzy table
   recall always returns some.
2. ``clarify`` when the phrasing is vague ("how are we doing?", "show me the data", "销售怎么样") and the
   question does not name both a metric and a period, and names no entity row; also when only generic
   domain words are present with nothing to compute or list.
3. ``mixed`` when an aggregate clause (the aggregate score reaches the threshold, or the clause holds an
   aggregation word) is joined to a clause about rows ("..., and show their complaint reasons", "and which ones
   were they?", "及其投诉原因", "？把名单列一下").
   Without warehouse evidence, a question of one search term or less is ``clarify`` ("这个呢").
4. otherwise the higher of the aggregate and detail scores (ties go to aggregate when a metric is bound).
"""

from __future__ import annotations

import re

from router.intent import _lexicon as lex
from router.intent.coverage import unbound_terms
from router.intent.types import IntentDecision, IntentSignals, RowHit
from router.understanding.types import Understanding

THRESHOLD = 2.0
ROW_HIT_MIN_SCORE = 0.8


def _word_spans(text: str, words: list[str]) -> list[tuple[int, int, str]]:
    """Where the words that bound a table stand in the question (plurals of English words included)."""
    spans = []
    for word in dict.fromkeys(w.lower() for w in words if w):
        if not word.isascii():
            stem = re.escape(word)
        elif word.endswith("y"):
            stem = rf"\b{re.escape(word[:-1])}(?:y|ies)\b"
        else:
            stem = rf"\b{re.escape(word)}(?:e?s)?\b"
        spans += [(m.start(), m.end(), word) for m in re.finditer(stem, text, re.IGNORECASE)]
    return spans


def _row_cues(text: str, s: IntentSignals) -> tuple[set[str], bool]:
    """Rows asked of a bound table ("show me the invoices", "所有曲目") and a key named after its noun
    ("invoice 412", "发票号8579")."""
    asked, keyed = set(), False
    for start, end, word in _word_spans(text, s.table_words):
        if lex.ROWS_LEAD.search(text[:start]):
            asked.add(f"rows of '{word}'")
        keyed = keyed or bool(lex.KEY_AFTER.search(text[end:]))
    return asked, keyed


def _scores(u: Understanding, s: IntentSignals) -> tuple[float, float, list[str]]:
    """The aggregate and detail scores of the question, with the reason for each point (in that order)."""
    text = u.normalized
    reasons: list[str] = []
    cues = {m.group(0).lower() for m in lex.AGGREGATION.finditer(text)}
    agg = _aggregate_score(u, s, cues, reasons)
    det, details, rows = _detail_score(text, s, cues, reasons)
    grouped = {d.concept for d in u.dimensions}
    tables = s.table_words
    counted = (
        tables
        and u.dimensions
        and not (s.metric_bindings or cues or details - grouped or rows)
        and not lex.LIST_VERB.search(text)
    )
    if counted:  # "orders by status", "customers per region": counts per group
        agg += 2.5
        reasons.append(f"'{tables[0]}' grouped by {u.dimensions[0].concept}: counts per group")
    elif not s.metric_bindings and not cues and tables:
        det += 1.0
        reasons.append("table words without aggregation: rows asked for")
    return agg, det, reasons


def _aggregate_score(u: Understanding, s: IntentSignals, cues: set[str], reasons: list[str]) -> float:
    """Points for a total: bound metrics, aggregation words, a granularity, a comparison, a group-by."""
    agg = 0.0
    if s.metric_bindings:
        agg += 2.0 + 0.25 * (len(s.metric_bindings) - 1)
        reasons.append(f"metric binding(s): {', '.join(s.metric_bindings[:3])}")
    if cues:
        agg += min(3.0, 1.5 * len(cues))
        reasons.append(f"aggregation word(s): {', '.join(sorted(cues)[:4])}")
    if u.granularity:
        agg += 1.5
        reasons.append(f"granularity '{u.granularity}'")
    if u.comparison:
        agg += 1.0
        reasons.append(f"comparison '{u.comparison.kind}'")
    if u.dimensions and (s.metric_bindings or cues):
        agg += 1.0
        reasons.append(f"group-by: {', '.join(d.concept for d in u.dimensions[:3])}")
    return agg


def _detail_score(
    text: str, s: IntentSignals, cues: set[str], reasons: list[str]
) -> tuple[float, set[str], list[RowHit]]:
    """Points for rows: detail phrasing, a listing verb, a named entity, entity rows, a key; with the detail
    phrases and the entity rows found."""
    det = 0.0
    asked, keyed = _row_cues(text, s)
    details = {m.group(0).lower() for m in lex.DETAIL.finditer(text)} | asked
    if details:
        det += min(4.0, 2.0 * len(details))
        reasons.append(f"detail phrasing: {', '.join(sorted(details)[:4])}")
    if lex.LIST_VERB.search(text) and not cues:
        det += 1.0
        reasons.append("listing verb without aggregation words")
    named = [m.group(0) for m in lex.NAMED.finditer(text)]
    if named and not s.metric_bindings and not s.value_bindings:
        det += 1.5
        reasons.append(f"named entity: {named[0]}")
    rows = [h for h in s.row_hits if h.score >= ROW_HIT_MIN_SCORE]
    if rows:
        det += 1.5
        reasons.append(f"entity row(s): {', '.join(f'{h.type} {h.label}' for h in rows[:3])}")
    if keyed:
        det += 2.0
        reasons.append("a row named by its key")
    return det, details, rows


_MEASURED = re.compile(r"\b(?:number|count|total|sum|average|avg|share|percentage)\s+of\s+(?:the\s+)?$", re.I)


def rows_clause(text: str, table_words: list[str]) -> tuple[str, str] | None:
    """The joining words and the clause about rows when an aggregate clause is followed by one ("and their
    claims", "..., and which ones were they?", "？把名单列一下"); None otherwise."""
    m = lex.CLAUSE_JOIN.search(text)
    if not m:
        return None
    tail = text[m.start() :]
    asks_which = lex.ROW_QUESTION.search(tail) and (
        not lex.AGGREGATION.search(tail) or ranked_tables(tail, table_words)  # "what were its 10 largest orders"
    )
    about_rows = (
        lex.DETAIL.search(tail)
        or lex.TAIL_ROWS.search(tail)
        or asks_which
        or any(
            start >= m.start() and not _MEASURED.search(text, m.start(), start)
            for start, _, _ in _word_spans(text, table_words)
        )  # "? by number of payments": a measure named by its table, no rows
    )
    return (m.group(0), tail) if about_rows else None


def without_join(clause: str) -> str:
    """A clause about rows without the words joining it to the one before ("plus the orders ..." -> "the
    orders ...")."""
    return lex.LEADING_JOIN.sub("", clause).strip()


def ranked_tables(text: str, table_words: list[str]) -> list[str]:
    """The table words whose rows a number ranks ("its 10 largest orders", "the 5 most delayed flights"): the
    rows themselves are asked for, ordered and limited, not a total of them."""
    return list(
        dict.fromkeys(word for start, _, word in _word_spans(text, table_words) if lex.RANKED_ROWS.search(text[:start]))
    )


def classify_fast(u: Understanding, s: IntentSignals) -> IntentDecision:
    text = u.normalized
    agg, det, reasons = _scores(u, s)
    scores = {"aggregate": round(agg, 2), "detail": round(det, 2)}
    rows = [h for h in s.row_hits if h.score >= ROW_HIT_MIN_SCORE]
    # table hits come from fuzzy recall (some tables always come back): context only, not evidence
    structural = bool(s.metric_bindings or s.dimension_bindings or s.table_words)
    domain = structural or bool(s.value_bindings or rows or lex.GENERIC_DOMAIN.search(text))
    known = [*s.bound_words, *s.value_bindings, *(h.label for h in rows)]
    unbound = unbound_terms(u, known) if not structural else []
    if unbound:
        # only a value or a row name binds ("the weather in Shanghai"): what is asked of it is unknown
        return IntentDecision(
            "unsupported",
            0.8,
            [*reasons, f"nothing in the model is called {', '.join(repr(w) for w in unbound[:3])}"],
            scores=scores,
        )
    vague = lex.VAGUE.search(text)
    named_metric = bool(s.metric_bindings)
    if vague and not rows and not (named_metric and u.time_ranges) and det < THRESHOLD:
        missing = [w for w, ok in (("a metric", named_metric), ("a period", bool(u.time_ranges))) if not ok]
        return IntentDecision(
            "clarify",
            0.8,
            [*reasons, f"vague phrasing '{vague.group(0)}'; missing " + " and ".join(missing)],
            scores=scores,
        )
    if not domain:
        if not u.search_terms:
            return IntentDecision(
                "clarify", 0.6, [*reasons, "too little to go on: no metric, entity or table"], scores=scores
            )
        return IntentDecision(
            "unsupported",
            0.7,
            [*reasons, "nothing in the question binds to the model: no metric, table, dimension, value or row"],
            scores=scores,
        )
    if max(agg, det) < 1.0:
        return IntentDecision("clarify", 0.6, [*reasons, "nothing to compute or list"], scores=scores)
    clause = rows_clause(text, s.table_words)
    if clause and (agg >= THRESHOLD or lex.AGGREGATION.search(text[: text.find(clause[1])])):
        return IntentDecision(
            "mixed",
            _confidence(agg, 1.0),
            [*reasons, f"an aggregate clause and a clause about rows joined by '{clause[0]}'"],
            scores=scores,
        )
    if agg >= det:
        return IntentDecision("aggregate", _confidence(agg, det), reasons, scores=scores)
    return IntentDecision("detail", _confidence(det, agg), reasons, scores=scores)


def _confidence(best: float, other: float) -> float:
    margin = (best - other) / (best + other + 1.0)
    return round(min(0.99, max(0.35, 0.5 + 0.5 * margin + 0.05 * min(best, 4.0))), 3)
