"""One answer synthesizer for every path: short text (question's language), table, chart, provenance.

Fast mode fills EN/ZH templates with numbers taken from the result table and formatted by
``answer.formatting.fmt_number``; LLM mode asks a DSPy program for the text and keeps it only when
every number in it is a number of the table (else the template text is used).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, is_dataclass
from typing import Any

import dspy

from answer.charts import chart_spec, time_column
from answer.formatting import (
    change_numbers,
    fmt_change,
    fmt_measure,
    fmt_number,
    fmt_period,
    fmt_value,
    grain_of,
    is_number,
    label,
    stray_numbers,
    table_numbers,
)
from answer.scope import Scope
from answer.vocabulary import vocabulary
from cubesage_core.llm import two_mode
from cubesage_core.tokens import truncate_to_tokens
from router.pipeline import PipelineResult
from router.tables import ResultTable, table_from_rows

TABLE_TOKENS = 1500  # the result table as the answer prompt shows it


@dataclass
class Synthesis:
    text: str
    table: dict[str, Any]
    chart: dict[str, Any] | None
    provenance: dict[str, Any]


class AnswerText(dspy.Signature):
    """Answer the question in 1-3 sentences in the given language, using only numbers copied exactly
    as written from the result table or the facts. No other numbers."""

    question: str = dspy.InputField()
    language: str = dspy.InputField(desc="en or zh")
    table: str = dspy.InputField(desc="result table, pipe-separated, numbers already formatted")
    facts: str = dspy.InputField(desc="what was queried: intent, filters, time range; changes of compared periods")
    answer: str = dspy.OutputField()


def synthesize(result: PipelineResult, *, use_llm: bool | None = None, scope: Scope | None = None) -> Synthesis:
    """Text, table, chart and provenance of one answer; ``scope`` (from the model) words refusals and nouns."""
    lang = result.understanding.language
    intent = result.intent.intent
    table = result.table
    fast_text = template_text(result, scope or Scope())
    if intent in ("unsupported", "clarify") or not table.rows or result.error:
        text, mode, reason = fast_text, "fast", None
    else:
        outcome = two_mode(lambda: _llm_text(result), lambda: fast_text, step="answer", use_llm=use_llm)
        text, mode, reason = outcome.value, outcome.mode, outcome.fallback_reason
    charted = table_from_rows(result.aggregate.rows) if intent == "mixed" and result.aggregate else table
    chart = chart_spec(charted, lang, title=result.question) if intent in ("aggregate", "mixed") else None
    prov = provenance(result)
    prov["answer_mode"] = mode
    if reason:
        prov["answer_fallback_reason"] = reason
    shown = {**table.to_dict(), "labels": [label(c, lang) for c in table.columns], "formats": formats(table)}
    return Synthesis(text=text, table=shown, chart=chart, provenance=prov)


# -- templates -------------------------------------------------------------------------------------------

def template_text(result: PipelineResult, scope: Scope) -> str:
    lang = result.understanding.language
    intent = result.intent.intent
    if result.error:
        message = result.error["message"]
        return f"无法回答这个问题：{message}" if lang == "zh" else f"I can't answer that: {message}"
    if intent == "unsupported":
        return scope.unsupported(lang)
    if intent == "clarify":
        return scope.clarify(lang)
    if intent == "detail" and result.detail is not None:
        return _detail_text(result, lang, scope)
    agg_table = table_from_rows(result.aggregate.rows) if result.aggregate is not None else result.table
    text = (_comparison_text(result.aggregate, lang) or _counted_groups_text(result, agg_table, lang)
            or _aggregate_text(agg_table, lang, _scope(result)))
    if intent == "mixed" and result.mixed is not None:
        if result.mixed.join:  # the per-entity counts are table columns, so the text names no extra number
            key = label(result.mixed.join["aggregate"], lang)
            text += (f" 每个{key}的明细汇总见 明细条数 列。" if lang == "zh"
                     else f" Detail rows are summarised per {key} in the detail_rows column.")
        else:
            text += (" 相关明细另列于下方。" if lang == "zh" else " The related detail rows are listed separately.")
    return text


BOUNDS = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}  # a bound on a measure ("order count > 15")


def _scope(result: PipelineResult) -> str:
    """The period plus the filter values of the Cube query ("this month, east")."""
    cube_query = getattr(result.aggregate, "cube_query", None) or {}
    lang = result.understanding.language
    values = [show_value(f.get("member", ""), v, lang) if f.get("operator") not in BOUNDS
              else f"{label(f['member'], lang)} {BOUNDS[f['operator']]} {v}"
              for f in cube_query.get("filters") or [] for v in f.get("values") or []]
    parts = [p for p in (_period(result), *values) if p]
    return ("，" if lang == "zh" else ", ").join(parts)


def formats(table: ResultTable) -> list[str | None]:
    """The Cube format of each column ("percent" for orders.refund_rate), None for the others."""
    vocab = vocabulary()
    return [vocab.member_format(c) or ("percent" if c.endswith(".share") else None) for c in table.columns]


def show_value(column: str, value: Any, lang: str) -> str:
    """A dimension value as the text shows it: its glossary name in ``lang`` when it has one ("south" -> "华南")."""
    if isinstance(value, str):
        named = vocabulary().value_label(column, value, lang)
        if named:
            return named
    return fmt_value(value)


def _period(result: PipelineResult) -> str:
    tr = getattr(result.understanding, "time_range", None)
    if tr is None:
        return ""
    return tr.label or f"{tr.start.isoformat()}..{tr.end.isoformat()}"


def _aggregate_text(table: ResultTable, lang: str, period: str) -> str:
    if not table.rows:
        return "没有符合条件的数据。" if lang == "zh" else "No data matches the question."
    numeric = [i for i, _ in enumerate(table.columns)
               if all(is_number(r[i]) for r in table.rows if r[i] is not None)
               and any(r[i] is not None for r in table.rows)]
    dims = [i for i in range(len(table.columns)) if i not in numeric]
    if not numeric:
        return _count_text(len(table.rows), lang)
    m = numeric[0]
    metric = label(table.columns[m], lang)
    fmts = formats(table)

    def num(row: list[Any], i: int) -> str:
        return fmt_measure(row[i], fmts[i])

    if len(table.rows) == 1 and not dims:
        parts = [f"{label(table.columns[i], lang)} {num(table.rows[0], i)}" for i in numeric]
        if lang == "zh":
            return f"{period + '，' if period else ''}{'，'.join(parts)}。"
        return f"{'; '.join(parts)}{' (' + period + ')' if period else ''}."
    t = time_column(table)
    if t is not None:
        first, last = table.rows[0], table.rows[-1]
        peak = max((r for r in table.rows if r[m] is not None), key=lambda r: r[m])
        grain = grain_of(table.columns[t])

        def when(row: list[Any]) -> str:
            return fmt_period(row[t], grain, lang)

        if len(table.rows) == 1:  # one period: its value, not a change
            return f"{when(first)}，{metric} {num(first, m)}。" if lang == "zh" else \
                f"{metric} {num(first, m)} ({when(first)})."
        if lang == "zh":
            return (f"{metric}从 {when(first)} 的 {num(first, m)} 变为 {when(last)} 的 "
                    f"{num(last, m)}，峰值在 {when(peak)}（{num(peak, m)}）。")
        return (f"{metric} went from {num(first, m)} ({when(first)}) to {num(last, m)} "
                f"({when(last)}); the peak was {num(peak, m)} in {when(peak)}.")
    if not dims:
        return _count_text(len(table.rows), lang)
    ranked = sorted((r for r in table.rows if r[m] is not None), key=lambda r: r[m], reverse=True)
    by = _by([table.columns[d] for d in dims], lang)

    def name(row: list[Any]) -> str:
        return " / ".join(show_value(table.columns[d], row[d], lang) for d in dims)

    share = table.columns.index(f"{table.columns[m]}.share") if f"{table.columns[m]}.share" in table.columns else None

    def value(row: list[Any]) -> str:  # with its share of the total when the question asked for shares
        return num(row, m) + (f" ({fmt_measure(row[share], 'percent')})" if share is not None else "")

    n = len(table.rows)
    if lang == "zh":
        listed = "，".join(f"{name(r)} {value(r)}" for r in ranked[:3])
        total = f"（共 {fmt_number(n)} 项）" if n > 1 else ""
        return f"{period}按{by}的{metric}：{listed}{total}。"
    listed = ", ".join(f"{name(r)} {value(r)}" for r in ranked[:3])
    tail = f" ({period})" if period else ""
    total = f" ({fmt_number(n)} rows in total)" if n > 1 else ""
    return f"{metric} by {by}{tail}: {listed}{total}."


HOW_MANY = re.compile(r"\bhow many\b|多少|几个|几位", re.IGNORECASE)


def _counted_groups_text(result: PipelineResult, table: ResultTable, lang: str) -> str | None:
    """"How many customers placed more than 10 orders?": the number of groups that pass a bound on a
    measure, then the first of them ("266 customers have order count > 10: ...")."""
    query = getattr(result.aggregate, "cube_query", None) or {}
    bounds = [f for f in query.get("filters") or [] if f.get("operator") in BOUNDS]
    dims = query.get("dimensions") or []
    if not bounds or len(dims) != 1 or not HOW_MANY.search(result.understanding.normalized) or not table.rows:
        return None
    bound = bounds[0]
    rule = f"{label(bound['member'], lang)} {BOUNDS[bound['operator']]} {bound['values'][0]}"
    what, n = label(dims[0], lang), fmt_number(len(table.rows))
    m = table.columns.index(bound["member"]) if bound["member"] in table.columns else len(table.columns) - 1
    d = table.columns.index(dims[0])
    top = sorted(table.rows, key=lambda r: r[m] if r[m] is not None else 0, reverse=True)[:3]
    shown = ", ".join(f"{show_value(dims[0], r[d], lang)} {fmt_measure(r[m], None)}" for r in top)
    if lang == "zh":
        return f"共 {n} 个{what}满足 {rule}：{shown.replace(', ', '，')}。"
    return f"{n} {what}{'' if what.endswith('s') else 's'} have {rule}: {shown}."


CHANGE_KEYS = ("measure", "current", "previous", "change", "change_pct", "current_period", "previous_period")


def _comparison_text(agg: Any, lang: str) -> str | None:
    """Compared periods: both values (table numbers) and the change ("GMV: 81.0M (2024) vs 27.0M (2023),
    +200.29%"); by group, the three largest current values."""
    derived = getattr(agg, "derived", None) or {}
    periods, changes = derived.get("periods") or [], derived.get("changes") or []
    if len(periods) < 2 or not changes:
        return None
    measure = changes[0]["measure"]
    rows = sorted((c for c in changes if c["measure"] == measure), key=lambda c: c["current"], reverse=True)
    dims = [k for k in rows[0] if k not in CHANGE_KEYS]
    fmt = vocabulary().member_format(measure)
    now = rows[0].get("current_period") or periods[0]["label"]
    before = rows[0].get("previous_period") or periods[1]["label"]
    metric = label(measure, lang)

    def values(c: dict[str, Any]) -> tuple[str, str, str]:
        change = fmt_change(c["change_pct"]) if c["change_pct"] is not None else "n/a"
        return fmt_measure(c["current"], fmt), fmt_measure(c["previous"], fmt), change

    if not dims:
        cur, prev, change = values(rows[0])
        return (f"{metric}：{now} {cur}，{before} {prev}，变化 {change}。" if lang == "zh"
                else f"{metric}: {cur} ({now}) vs {prev} ({before}), {change}.")
    by = _by(dims, lang)
    listed = []
    for c in rows[:3]:
        name = " / ".join(show_value(d, c[d], lang) for d in dims)
        cur, prev, change = values(c)
        listed.append(f"{name} {cur} 对比 {prev}（{change}）" if lang == "zh" else f"{name} {cur} vs {prev} ({change})")
    if lang == "zh":
        return f"按{by}的{metric}，{now} 对比 {before}：{'，'.join(listed)}（共 {fmt_number(len(rows))} 项）。"
    return f"{metric} by {by}, {now} vs {before}: {', '.join(listed)} ({fmt_number(len(rows))} rows in total)."


def _by(columns: list[str], lang: str) -> str:
    """The grouping columns as the text names them ("region and channel", "地区、渠道")."""
    return ("、" if lang == "zh" else " and ").join(label(c, lang) for c in columns)


def _count_text(n: int, lang: str) -> str:
    return f"共 {fmt_number(n)} 行结果。" if lang == "zh" else f"{fmt_number(n)} rows."


def _detail_text(result: PipelineResult, lang: str, scope: Scope) -> str:
    detail = result.detail
    assert detail is not None
    plan = detail.plan
    if plan.get("kind") == "table_lookup":
        if not detail.rows:
            return "没有找到相关的表。" if lang == "zh" else "No table of the warehouse matches."
        table, title = detail.rows[0][0], detail.rows[0][1]
        if lang == "zh":
            return f"相关数据在表 {table}{'（' + title + '）' if title else ''}中。"
        return f"That is in table {table}{' (' + title + ')' if title else ''}."
    noun = scope.noun(plan.get("target", ""), lang)
    who = ", ".join(e.label for e in detail.entities)
    n = len(detail.rows)
    capped = n >= int(plan.get("limit") or 0) > 0
    if lang == "zh":
        scope = f"（{who}）" if who else ""
        more = f"，已达上限，仅显示前 {fmt_number(n)} 条，可能还有更多" if capped else ""
        return f"找到 {fmt_number(n)} 条{noun}{scope}{more}。" if n else f"没有找到符合条件的{noun}{scope}。"
    scope = f" for {who}" if who else ""
    more = f" (the limit: only the first {fmt_number(n)} are shown, there may be more)" if capped else ""
    one = noun[:-1] if n == 1 and noun.endswith("s") else noun
    return f"Found {fmt_number(n)} {one}{scope}{more}." if n else f"No {noun} found{scope}."


# -- LLM mode --------------------------------------------------------------------------------------------

def _llm_text(result: PipelineResult) -> str:
    table = result.table
    lang = result.understanding.language
    fmts, grains = formats(table), [grain_of(c) for c in table.columns]

    def cell(v: Any, i: int) -> str:
        return fmt_measure(v, fmts[i]) if is_number(v) else fmt_period(v, grains[i], lang)

    lines = [" | ".join(table.columns)] + [" | ".join(cell(v, i) for i, v in enumerate(r)) for r in table.rows[:30]]
    changes = (getattr(result.aggregate, "derived", None) or {}).get("changes") if result.aggregate else None
    facts = f"intent={result.intent.intent}; period={_period(result)}"
    if changes:
        facts += "; changes: " + ", ".join(f"{label(c['measure'], lang)} {fmt_change(c['change_pct'])}"
                                           for c in changes if c.get("change_pct") is not None)
    pred = dspy.Predict(AnswerText)(question=result.question, language=result.understanding.language,
                                    table=truncate_to_tokens("\n".join(lines), TABLE_TOKENS), facts=facts)
    text = str(pred.answer).strip()
    allowed = table_numbers(table.columns, table.rows, fmts) | change_numbers(changes)
    labels = tuple(r.label for r in result.understanding.time_ranges)
    stray = [n for n in stray_numbers(text, allowed, labels) if not _is_date_part(n)]
    if not text or stray:
        raise ValueError(f"LLM answer has numbers not in the table: {stray[:5]}")
    return text


def _is_date_part(token: str) -> bool:
    return len(token) == 4 and token.isdigit() and 1990 <= int(token) <= 2100


# -- provenance ------------------------------------------------------------------------------------------

def provenance(result: PipelineResult) -> dict[str, Any]:
    decision = result.intent
    retrieval = result.retrieval.get("result")
    agg = result.aggregate
    detail = result.detail
    tables = set(detail.tables if detail else [])
    tables |= {t["table"] for t in result.sag.get("tables", [])[:3]}
    prov: dict[str, Any] = {
        "intent": decision.intent, "intent_confidence": round(float(decision.confidence), 4),
        "intent_reasons": list(decision.reasons),
        "understanding": _plain(result.understanding),
        "sub_queries": result.sub_queries,
        "follow_up_of": result.follow_up_of,
        "bindings": [b.to_dict() for b in getattr(retrieval, "term_bindings", [])],
        "crag_grade": getattr(getattr(retrieval, "crag", None), "grade", None),
        "retrieved": result.retrieval.get("fused", [])[:10],
        "cube_query": getattr(agg, "cube_query", None),
        "sql": [s for s in (getattr(agg, "sql", None), detail.sql if detail else None) if s] or None,
        "backend": getattr(agg, "backend", None),
        "result_cache": None if agg is None else ("hit" if agg.cached else "miss"),
        "fallback_reason": getattr(agg, "fallback_reason", None) or (detail.fallback_reason if detail else None),
        "detail_plan": detail.plan if detail else None,
        "detail_mode": detail.mode if detail else None,
        "entities": result.sag.get("rows", []),
        "sag_events": sorted({e for t in result.sag.get("tables", []) for e in t.get("event_ids", [])}),
        "sag_chunks": sorted({c for t in result.sag.get("tables", []) for c in t.get("chunk_ids", [])}),
        "tables": sorted(tables),
        "join": result.mixed.join if result.mixed else None,
        "changes": (agg.derived or {}).get("changes") if agg is not None and hasattr(agg, "derived") else None,
        "problems": list(result.problems),
        "error": result.error,
        "timings_ms": dict(result.timings_ms),
    }
    if result.mixed is not None:  # both halves, also when joined: the table then has per-entity counts only
        prov["sections"] = result.mixed.sections
    return prov


def _plain(value: Any) -> Any:
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    return value
