"""Fast (deterministic) intent rules: weighted EN/ZH cues and warehouse signals.

Decision order (documented rule):
1. ``unsupported`` when the question hits the out-of-domain list (weather, stock prices, sports, HR, ...)
   and has no metric binding (a city named in a weather question may still hit a row), or when it
   carries no warehouse evidence at all (no metric/dimension/value binding, no entity row, no domain
   word, no aggregation cue). Table hits are context only: fuzzy table recall always returns some.
2. ``clarify`` when the phrasing is vague ("how are we doing?", "show me the data", "销售怎么样") and the
   question does not name both a metric and a period, and names no entity row; also when only generic
   domain words are present with nothing to compute or list.
3. ``mixed`` when the aggregate score reaches the threshold and an aggregate clause is joined to a
   clause about rows ("..., and show their refund reasons", "and their orders", "及其退款原因").
   Without warehouse evidence, a question of one search term or less is ``clarify`` ("这个呢").
4. otherwise the higher of the aggregate and detail scores (ties go to aggregate when a metric is bound).
"""

from __future__ import annotations

from router.intent import _lexicon as lex
from router.intent.types import IntentDecision, IntentSignals
from router.understanding.types import Understanding

THRESHOLD = 2.0
ROW_HIT_MIN_SCORE = 0.8


def _scores(u: Understanding, s: IntentSignals) -> tuple[float, float, list[str]]:
    text = u.normalized
    reasons: list[str] = []
    agg = det = 0.0
    if s.metric_bindings:
        agg += 2.0 + 0.25 * (len(s.metric_bindings) - 1)
        reasons.append(f"metric binding(s): {', '.join(s.metric_bindings[:3])}")
    elif m := lex.METRIC_WORDS.search(text):
        agg += 1.5
        reasons.append(f"metric word '{m.group(0)}'")
    cues = {m.group(0).lower() for m in lex.AGGREGATION.finditer(text)}
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
    details = {m.group(0).lower() for m in lex.DETAIL.finditer(text)}
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
    if lex.ORDER_ID.search(text):
        det += 2.0
        reasons.append("order id named")
    grouped = {d.concept for d in u.dimensions}
    counted = lex.DOMAIN.search(text) if u.dimensions and not (s.metric_bindings or cues or details - grouped or rows) \
        and not (lex.LIST_VERB.search(text) or lex.METRIC_WORDS.search(text)) else None
    if counted:  # "orders by status", "customers per region": counts per group
        agg += 2.5
        reasons.append(f"'{counted.group(0)}' grouped by {u.dimensions[0].concept}: counts per group")
    elif not s.metric_bindings and not cues and lex.DOMAIN.search(text):
        det += 1.0
        reasons.append("entity/table words without aggregation: rows asked for")
    return agg, det, reasons


def _detail_tail(text: str) -> str | None:
    """The joining words when an aggregate clause is followed by a clause about rows ("and their refunds")."""
    m = lex.CLAUSE_JOIN.search(text)
    if not m:
        return None
    tail = text[m.start():]
    return m.group(0) if lex.DETAIL.search(tail) or lex.DOMAIN.search(tail) else None


def classify_fast(u: Understanding, s: IntentSignals) -> IntentDecision:
    text = u.normalized
    agg, det, reasons = _scores(u, s)
    scores = {"aggregate": round(agg, 2), "detail": round(det, 2)}
    rows = [h for h in s.row_hits if h.score >= ROW_HIT_MIN_SCORE]
    # table hits come from fuzzy recall (some tables always come back): context only, not evidence
    evidence = bool(s.metric_bindings or s.dimension_bindings or s.value_bindings or rows)
    domain = evidence or bool(lex.DOMAIN.search(text) or lex.METRIC_WORDS.search(text))

    off = lex.OFF_DOMAIN.search(text)
    if off and not s.metric_bindings:
        return IntentDecision("unsupported", 0.9, [*reasons, f"out-of-domain topic '{off.group(0)}'"],
                              scores=scores)
    vague = lex.VAGUE.search(text)
    named_metric = bool(s.metric_bindings or lex.METRIC_WORDS.search(text))
    if vague and not rows and not (named_metric and u.time_ranges) and det < THRESHOLD:
        missing = [w for w, ok in (("a metric", named_metric), ("a period", bool(u.time_ranges))) if not ok]
        return IntentDecision("clarify", 0.8, [*reasons, f"vague phrasing '{vague.group(0)}'; missing "
                                               + " and ".join(missing)], scores=scores)
    if not domain and agg < THRESHOLD and det < THRESHOLD:
        if len(u.search_terms) <= 1:
            return IntentDecision("clarify", 0.6, [*reasons, "too little to go on: no metric, entity or table"],
                                  scores=scores)
        return IntentDecision("unsupported", 0.7, [*reasons, "no warehouse evidence: no metric, entity, table or "
                                                   "domain word"], scores=scores)
    if max(agg, det) < 1.0:
        return IntentDecision("clarify", 0.6, [*reasons, "nothing to compute or list"], scores=scores)
    if agg >= THRESHOLD and (join := _detail_tail(text)):
        return IntentDecision("mixed", _confidence(agg, 1.0),
                              [*reasons, f"an aggregate clause and a clause about rows joined by '{join}'"],
                              scores=scores)
    if agg >= det:
        return IntentDecision("aggregate", _confidence(agg, det), reasons, scores=scores)
    return IntentDecision("detail", _confidence(det, agg), reasons, scores=scores)


def _confidence(best: float, other: float) -> float:
    margin = (best - other) / (best + other + 1.0)
    return round(min(0.99, max(0.35, 0.5 + 0.5 * margin + 0.05 * min(best, 4.0))), 3)
