"""One answer synthesizer for every path: short text (question's language), table, chart, provenance.

Fast mode fills EN/ZH templates with numbers taken from the result table and formatted by
``answer.formatting.fmt_number``; LLM mode asks a DSPy program for the text and keeps it only when
every number in it is a number of the table (else the template text is used).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, is_dataclass
from itertools import pairwise
from typing import Any

import dspy

from answer.charts import chart_spec, count_card
from answer.formatting import (
    GRAIN_WORDS_ZH,
    change_numbers,
    cut_numbers,
    filter_numbers,
    fmt_bound,
    fmt_change,
    fmt_measure,
    fmt_number,
    fmt_period,
    fmt_value,
    grain_of,
    is_number,
    label,
    question_numbers,
    stray_numbers,
    table_numbers,
)
from answer.scope import Scope
from answer.tables import Parts, column_format, parts_of, view
from answer.tie_text import tie_text
from answer.trend import Trend
from answer.vocabulary import vocabulary
from cubesage_core.llm import two_mode
from cubesage_core.tokens import truncate_to_tokens
from router.cuts import Cut
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


def synthesize(
    result: PipelineResult, *, use_llm: bool | None = None, scope: Scope | None = None, trend: Trend | None = None
) -> Synthesis:
    """Text, table, chart and provenance of one answer; ``scope`` (from the model) words refusals and nouns;
    ``trend`` (``answer.trend``) gives a single number's KPI card its change and sparkline."""
    scope = scope or Scope()
    lang = result.understanding.language
    intent = result.intent.intent
    table = result.table
    cut = table_cut(result)
    fast_text = _sentence(template_text(result, scope))
    if intent in ("unsupported", "clarify") or not table.rows or result.error:
        text, mode, reason = fast_text, "fast", None
    else:
        outcome = two_mode(lambda: _llm_text(result), lambda: fast_text, step="answer", use_llm=use_llm)
        text, mode, reason = outcome.value, outcome.mode, outcome.fallback_reason
    text += "".join(_cut_text(c, lang) for c in result.cuts)  # every limit reached is said, in either mode
    text += _corrections_text(result.corrections, lang)
    if result.tie is not None and result.aggregate is not None and table.rows and not result.error:
        agg = result.aggregate
        text += tie_text(result.tie, agg.rows, agg.cube_query, lang=lang, mixed=intent == "mixed")
    prov = provenance(result)
    prov["answer_mode"] = mode
    if reason:
        prov["answer_fallback_reason"] = reason
    return Synthesis(
        text=text,
        table=view(table, lang, truncated=cut is not None, total_rows=cut.total if cut else None),
        chart=_chart(result, scope, trend),
        provenance=prov,
    )


def _sentence(text: str) -> str:
    """The text with a capital first letter ("late rate went from ..." -> "Late rate went from ...")."""
    return text[:1].upper() + text[1:]


def _chart(result: PipelineResult, scope: Scope, trend: Trend | None) -> dict[str, Any] | None:
    """The aggregate's chart (of the aggregate half of a mixed answer), or a detail answer's row count card."""
    intent, lang = result.intent.intent, result.understanding.language
    if result.error or intent in ("unsupported", "clarify"):
        return None
    if intent == "detail":
        if result.detail is None or not result.table.rows:
            return None
        plan = result.detail.plan
        noun = (
            ("表" if lang == "zh" else "tables")
            if plan.get("kind") == "table_lookup"
            else scope.noun(plan.get("target", ""), lang)
        )
        return count_card(len(result.table.rows), noun, title=result.question)
    charted = table_from_rows(result.aggregate.rows) if intent == "mixed" and result.aggregate else result.table
    return chart_spec(charted, lang, title=result.question, periods=_period_order(result.aggregate), trend=trend)


def _period_order(agg: Any) -> list[str] | None:
    """Labels of compared periods, the earlier first (by the start of their date ranges)."""
    periods = (getattr(agg, "derived", None) or {}).get("periods") or []

    def start(p: dict[str, Any]) -> str:
        span = p.get("dateRange") or [""]
        return str(span[0] if isinstance(span, list) else span)

    return [p["label"] for p in sorted(periods, key=start)] or None


def table_cut(result: PipelineResult) -> Cut | None:
    """The limit the answer's own table stopped at (``router.cuts``): the detail query's of a detail answer,
    else the aggregate's (a mixed answer's table is its aggregate, with per-entity counts)."""
    part = "detail" if result.intent.intent == "detail" else "aggregate"
    return next((c for c in result.cuts if c.part == part), None)


_CUT_TEXT = {
    "aggregate": (
        " The result stops at the row limit: {shown} of {total} rows are shown.",
        " 结果在行数上限处截断：显示 {shown} 行，共 {total} 行。",
    ),
    "detail": (
        " The rows stop at the limit: {shown} of {total} are shown.",
        " 明细达到上限：显示 {shown} 条，共 {total} 条。",
    ),
    "entities": (
        " Detail rows were looked up for the first {shown} of {total} rows only.",
        " 只为前 {shown} 行（共 {total} 行）查找了明细。",
    ),
}
_UNCOUNTED = (
    " The rows stop at a limit: {shown} are shown, and their total could not be counted.",
    " 结果在上限处截断：显示 {shown} 条，总数未能统计。",
)


def _corrections_text(corrections: list[tuple[str, str]], lang: str) -> str:
    """How typos were read: " (Read 'revnue' as 'revenue'.)"."""
    if not corrections:
        return ""
    if lang == "zh":
        return "（" + "，".join(f"已将“{a}”理解为“{b}”" for a, b in corrections) + "。）"
    return " (Read " + ", ".join(f"'{a}' as '{b}'" for a, b in corrections) + ".)"


def _cut_text(cut: Cut, lang: str) -> str:
    """The sentence stating one cut, "shown N of M" (M unknown when it could not be counted)."""
    en, zh = _CUT_TEXT[cut.part] if cut.total is not None else _UNCOUNTED
    return (zh if lang == "zh" else en).format(shown=fmt_number(cut.shown), total=fmt_number(cut.total or 0))


# -- templates -------------------------------------------------------------------------------------------


def _missing_text(result: PipelineResult, lang: str) -> str:
    """What CRAG found the index does not know, when corrective retrieval still found nothing: " Nothing in
    it matches “world”, “cup”."."""
    crag = getattr(result.retrieval.get("result"), "crag", None)
    if crag is None or crag.decision != "insufficient" or not crag.missing:
        return ""
    if lang == "zh":
        return " 数据中没有与以下内容匹配的：" + "、".join(f"“{w}”" for w in crag.missing) + "。"
    return " Nothing in it matches " + ", ".join(f"“{w}”" for w in crag.missing) + "."


def template_text(result: PipelineResult, scope: Scope) -> str:
    lang = result.understanding.language
    intent = result.intent.intent
    if result.error:
        message = result.error["message"]
        return f"无法回答这个问题：{message}" if lang == "zh" else f"I can't answer that: {message}"
    if intent == "unsupported":
        return scope.unsupported(lang) + _missing_text(result, lang)
    if intent == "clarify":
        return scope.clarify(lang)
    if intent == "detail" and result.detail is not None:
        return _detail_text(result, lang, scope)
    agg_table = table_from_rows(result.aggregate.rows) if result.aggregate is not None else result.table
    text = (
        _comparison_text(result.aggregate, lang, _filter_words(result))
        or _counted_groups_text(result, agg_table, lang)
        or _aggregate_text(agg_table, lang, _scope(result))
    ) + _together_text(result.aggregate, lang)
    if intent == "mixed" and result.mixed is not None:
        if result.mixed.join:  # the per-entity counts are table columns, so the text names no extra number
            key = label(result.mixed.join["aggregate"], lang)
            text += (
                f" 每个{key}的明细汇总见 明细条数 列。"
                if lang == "zh"
                else f" Detail rows are summarised per {key} in the detail_rows column."
            )
        else:
            text += " 相关明细另列于下方。" if lang == "zh" else " The related detail rows are listed separately."
    elif intent == "mixed":
        text += _rows_not_listed(result, lang)
    return text


def _together_text(agg: Any, lang: str) -> str:
    """The combined share of a limited ranking's rows ("the 5 biggest customers ... together 27.26% of the
    total"), its total counted over every group."""
    share = (getattr(agg, "derived", None) or {}).get("share") or {}
    together = [(m, v) for m, v in (share.get("together") or {}).items() if v is not None]
    if not together:
        return ""
    n = fmt_number(share.get("shown") or 0)
    if lang == "zh":
        parts = [f"{label(m, lang)}总额的 {fmt_measure(v, 'percent')}" for m, v in together]
        return f" 这 {n} 项合计占{'，'.join(parts)}。"
    parts = [f"{fmt_measure(v, 'percent')} of the total {label(m, lang)}" for m, v in together]
    return f" Together these {n} hold {', '.join(parts)}."


def _rows_not_listed(result: PipelineResult, lang: str) -> str:
    """A mixed answer whose rows part was refused says so, and why (the numbers alone are not the answer)."""
    why = next((p.get("message", "") for p in result.problems if p.get("code") == "detail_failed"), None)
    if why is None:
        return ""
    return f" 明细未列出：{why}" if lang == "zh" else f" The rows were not listed: {why}"


BOUNDS = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}  # a bound on a measure ("invoice count > 15")


def _scope(result: PipelineResult) -> str:
    """The period plus the filter values of the Cube query ("this month, east")."""
    lang = result.understanding.language
    parts = [p for p in (_period(result), *_filter_words(result)) if p]
    return ("，" if lang == "zh" else ", ").join(parts)


def _filter_words(result: PipelineResult) -> list[str]:
    """The Cube query's filters as the text says them: values, bounds, a key left unset ("without Album id"),
    and its segments by their labels ("late")."""
    cube_query = getattr(result.aggregate, "cube_query", None) or {}
    queries = getattr(result.aggregate, "cube_queries", None) or [cube_query]
    lang = result.understanding.language
    out = [label(s, lang) for s in cube_query.get("segments") or [] if all(s in q.get("segments", []) for q in queries)]
    for f in cube_query.get("filters") or []:
        if not all(f in q.get("filters", []) for q in queries):
            continue  # a compared member's own filter ("video vs audio"): its row says it
        member, op = f.get("member", ""), f.get("operator")
        if op == "notSet":
            out.append(f"无{label(member, lang)}" if lang == "zh" else f"without {label(member, lang)}")
        out += [
            show_value(member, v, lang) if op not in BOUNDS else _bound_text(member, op, v, lang)
            for v in f.get("values") or []
        ]
    return out


_YEARS = re.compile(r"\byears?\b|年", re.IGNORECASE)


def _bound_text(member: str, op: str, value: Any, lang: str) -> str:
    """ "Amount > 3,000", "Year built <= 1989": a bound as the text says it (a year column's year as written)."""
    name = label(member, lang)
    return f"{name} {BOUNDS[op]} {value if _YEARS.search(name) else fmt_bound(value)}"


def formats(table: ResultTable) -> list[str | None]:
    """The display format of each column ("percent" for loans.late_rate, "id" for keys), else None."""
    return [column_format(c) for c in table.columns]


def show_value(column: str, value: Any, lang: str) -> str:
    """A dimension value as the text shows it: its glossary name in ``lang`` when it has one ("DE" -> "德国")."""
    if isinstance(value, str):
        named = vocabulary().value_label(column, value, lang)
        if named:
            return named
    if is_number(value) and column_format(column) == "id" and float(value).is_integer():
        return str(int(value))  # a key or a year as written: 2011, not 2,011
    return fmt_value(value)


def _period(result: PipelineResult) -> str:
    tr = getattr(result.understanding, "time_range", None)
    if tr is None:
        return ""
    return tr.label or f"{tr.start.isoformat()}..{tr.end.isoformat()}"


def _aggregate_text(table: ResultTable, lang: str, period: str) -> str:
    if not table.rows:
        return "没有符合条件的数据。" if lang == "zh" else "No data matches the question."
    parts = parts_of(table, lang)
    if not parts.measures:
        return _count_text(len(table.rows), lang)
    m = parts.measures[0]
    metric = label(table.columns[m], lang)
    fmts = formats(table)

    def num(row: list[Any], i: int) -> str:
        return fmt_measure(row[i], fmts[i])

    if len(table.rows) == 1 and not parts.dims and parts.time is None:
        listed = [f"{label(table.columns[i], lang)} {num(table.rows[0], i)}" for i in parts.measures]
        listed += [  # the share a question asked for ("占全部销量的百分之多少": 16.48%)
            f"{label(c, lang)} {fmt_measure(table.rows[0][j], 'percent')}"
            for j, c in enumerate(table.columns)
            if c.endswith(".share") and is_number(table.rows[0][j])
        ]
        if lang == "zh":
            return f"{period + '，' if period else ''}{'，'.join(listed)}。"
        return f"{'; '.join(listed)}{' (' + period + ')' if period else ''}."
    if parts.time is not None:
        return _series_text(table, parts, lang, period)
    dims = parts.dims or [i for i in (parts.period,) if i is not None]  # compared members ("video vs audio")
    if not dims:
        return _count_text(len(table.rows), lang)
    share = table.columns.index(f"{table.columns[m]}.share") if f"{table.columns[m]}.share" in table.columns else None
    ranked = [r for r in table.rows if r[m] is not None]
    if share is None and not _ascending([r[m] for r in ranked]):
        # shares keep the rows' order (groups ranked by their share within the group); so does a ranking
        # from the lowest ("the five lowest ERAs"): its first rows are the answer
        ranked.sort(key=lambda r: r[m], reverse=True)
    by = _by([table.columns[d] for d in dims], lang) if parts.dims else ""

    def name(row: list[Any]) -> str:
        return " / ".join(show_value(table.columns[d], row[d], lang) for d in dims)

    def value(row: list[Any]) -> str:  # with its share of the total when the question asked for shares
        return num(row, m) + (f" ({fmt_measure(row[share], 'percent')})" if share is not None else "")

    n = len(table.rows)
    if lang == "zh":
        top = "，".join(f"{name(r)} {value(r)}" for r in ranked[:3])
        total = f"（共 {fmt_number(n)} 项）" if n > 1 else ""
        return f"{period}{'按' + by + '的' if by else ''}{metric}：{top}{total}。"
    top = ", ".join(f"{name(r)} {value(r)}" for r in ranked[:3])
    tail = f" ({period})" if period else ""
    total = f" ({fmt_number(n)} rows in total)" if n > 1 else ""
    return f"{metric}{' by ' + by if by else ''}{tail}: {top}{total}."


def _ascending(values: list[Any]) -> bool:
    """Numbers that rise from the first row to the last (a query ordered from the lowest)."""
    return (
        len(values) > 1
        and all(is_number(v) for v in values)
        and all(a <= b for a, b in pairwise(values))
        and values[0] != values[-1]
    )


MAX_SERIES_TEXT = 5


def _series_text(table: ResultTable, parts: Parts, lang: str, period: str) -> str:
    """A time series: one clause per series (a dimension value, a compared period or a measure), each with
    its first and last value and its peak; never one clause mixing two series."""
    t = parts.time
    assert t is not None
    keys = [i for i in (parts.period,) if i is not None] + parts.dims
    fmts, grain = formats(table), grain_of(table.columns[t])

    def when(row: list[Any]) -> str:
        return fmt_period(row[t], grain, lang)

    groups: dict[tuple[Any, ...], list[list[Any]]] = {}
    for row in table.rows:
        groups.setdefault(tuple(row[k] for k in keys), []).append(row)
    if keys:
        m = parts.measures[0]
        named = [
            (" / ".join(show_value(table.columns[k], v, lang) for k, v in zip(keys, key, strict=True)), rows, m)
            for key, rows in groups.items()
        ]
        named.sort(key=lambda item: -sum(abs(r[m] or 0) for r in item[1]))
    else:
        named = [(label(table.columns[m], lang), table.rows, m) for m in parts.measures]
    clauses = [_series_clause(name, rows, m, fmts[m], when, lang) for name, rows, m in named[:MAX_SERIES_TEXT]]
    clauses = [c for c in clauses if c]
    more = len(named) > MAX_SERIES_TEXT
    metric = label(table.columns[parts.measures[0]], lang)
    grain_word = GRAIN_WORDS_ZH.get(grain or "", "时间") if lang == "zh" else grain or "period"
    period = "" if parts.period is not None else period  # compared periods name themselves
    by = ("、" if lang == "zh" else " and ").join([label(table.columns[d], lang) for d in parts.dims] + [grain_word])
    if lang == "zh":
        head = f"{period}{'，' if period else ''}按{by}的{metric}：" if keys else ""
        return head + "；".join(clauses) + ("；其余系列见表格" if more else "") + "。"
    head = f"{metric} by {by}{' (' + period + ')' if period else ''}: " if keys else ""
    return head + "; ".join(clauses) + ("; the other series are in the table" if more else "") + "."


def _series_clause(name: str, rows: list[list[Any]], m: int, fmt: str | None, when: Any, lang: str) -> str:
    points = [r for r in rows if r[m] is not None]
    if not points:
        return ""
    first, last = points[0], points[-1]
    peak = max(points, key=lambda r: r[m])

    def value(row: list[Any]) -> str:
        return fmt_measure(row[m], fmt)

    if len(points) == 1:
        return f"{when(first)}，{name} {value(first)}" if lang == "zh" else f"{name} {value(first)} ({when(first)})"
    if lang == "zh":
        return (
            f"{name}从 {when(first)} 的 {value(first)} 变为 {when(last)} 的 {value(last)}，"
            f"峰值在 {when(peak)}（{value(peak)}）"
        )
    return (
        f"{name} went from {value(first)} ({when(first)}) to {value(last)} ({when(last)}), "
        f"peaking at {value(peak)} in {when(peak)}"
    )


HOW_MANY = re.compile(r"\bhow many\b|多少|几个|几位", re.IGNORECASE)


def _counted_groups_text(result: PipelineResult, table: ResultTable, lang: str) -> str | None:
    """ "How many customers placed more than 10 orders?": the number of groups that pass a bound on a
    measure, then the first of them ("266 customers have invoice count > 10: ...")."""
    query = getattr(result.aggregate, "cube_query", None) or {}
    bounds = [f for f in query.get("filters") or [] if f.get("operator") in BOUNDS]
    dims = query.get("dimensions") or []
    if not bounds or len(dims) != 1 or not HOW_MANY.search(result.understanding.normalized) or not table.rows:
        return None
    bound = bounds[0]
    rule = f"{label(bound['member'], lang)} {BOUNDS[bound['operator']]} {bound['values'][0]}"
    if query.get("total") and table.columns:  # the groups were counted in the query: one number
        counted, total = label(table.columns[0], lang), fmt_number(table.rows[0][0] or 0)
        return f"满足 {rule} 的{counted}：{total}。" if lang == "zh" else f"{counted} with {rule}: {total}."
    what, n = label(dims[0], lang), fmt_number(len(table.rows))
    m = table.columns.index(bound["member"]) if bound["member"] in table.columns else len(table.columns) - 1
    d = table.columns.index(dims[0])
    top = sorted(table.rows, key=lambda r: r[m] if r[m] is not None else 0, reverse=True)[:3]
    shown = ", ".join(f"{show_value(dims[0], r[d], lang)} {fmt_measure(r[m], None)}" for r in top)
    if lang == "zh":
        return f"共 {n} 个{what}满足 {rule}：{shown.replace(', ', '，')}。"
    return f"{n} {what}{'' if what.endswith('s') else 's'} have {rule}: {shown}."


CHANGE_KEYS = ("measure", "current", "previous", "change", "change_pct", "current_period", "previous_period")


def _comparison_text(agg: Any, lang: str, said: list[str]) -> str:
    """Compared periods, one clause per measure: both values (table numbers) and the change from the
    earlier period to the later ("Total fee (Germany) went from 2,698.50 (2023) to 8,102.50 (2024), +200.26%");
    by group, the three largest later values of the first measure. ``said``: the filters, after the measure."""
    derived = getattr(agg, "derived", None) or {}
    periods, changes = derived.get("periods") or [], derived.get("changes") or []
    if len(periods) < 2 or not changes:
        return ""
    dims = [k for k in changes[0] if k not in CHANGE_KEYS]
    later = changes[0].get("current_period") or periods[0]["label"]
    earlier = changes[0].get("previous_period") or periods[1]["label"]
    measures = list(dict.fromkeys(c["measure"] for c in changes))
    of = (f"（{'，'.join(said)}）" if lang == "zh" else f" ({', '.join(said)})") if said else ""
    if not dims:
        clauses = [
            _change_clause(
                label(m, lang) + of, next(c for c in changes if c["measure"] == m), lang, periods=(earlier, later)
            )
            for m in measures
        ]
        return ("；" if lang == "zh" else "; ").join(clauses) + ("。" if lang == "zh" else ".")
    measure = measures[0]
    rows = sorted((c for c in changes if c["measure"] == measure), key=lambda c: c["current"], reverse=True)
    by, metric = _by(dims, lang), label(measure, lang) + of
    listed = [_change_clause(" / ".join(show_value(d, c[d], lang) for d in dims), c, lang) for c in rows[:3]]
    if lang == "zh":
        return f"按{by}的{metric}，从 {earlier} 到 {later}：{'，'.join(listed)}（表中列出全部{by}）。"
    return f"{metric} by {by}, from {earlier} to {later}: {', '.join(listed)} (the table lists every {by})."


def _change_clause(name: str, change: dict[str, Any], lang: str, *, periods: tuple[str, str] | None = None) -> str:
    """With the (earlier, later) ``periods``: "Total fee went from A (2023) to B (2024), +200.26%"; without:
    "Germany from A to B (+198.00%)"."""
    fmt = vocabulary().member_format(change["measure"])
    before, now = fmt_measure(change["previous"], fmt), fmt_measure(change["current"], fmt)
    pct = fmt_change(change["change_pct"]) if change["change_pct"] is not None else "n/a"
    if lang == "zh":
        if periods:
            return f"{name}从 {periods[0]} 的 {before} 变为 {periods[1]} 的 {now}，变化 {pct}"
        return f"{name} 从 {before} 到 {now}（{pct}）"
    if periods:
        return f"{name} went from {before} ({periods[0]}) to {now} ({periods[1]}), {pct}"
    return f"{name} from {before} to {now} ({pct})"


def _by(columns: list[str], lang: str) -> str:
    """The grouping columns as the text names them ("region and channel", "地区、渠道")."""
    return ("、" if lang == "zh" else " and ").join(label(c, lang) for c in columns)


def _count_text(n: int, lang: str) -> str:
    return f"共 {fmt_number(n)} 行结果。" if lang == "zh" else f"{fmt_number(n)} rows."


def _named(result: PipelineResult, plan: dict[str, Any]) -> list[str]:
    """What the rows are for: the recognised rows' names (for a listing, those the question writes), the
    values a listing filters by, also those a synonym named ("电子产品" -> electronics), once each ("Frank",
    "Harris"; not "Frank, Frank, Frank"), then its bounds ("Size > 40")."""
    assert result.detail is not None
    filters = (plan.get("reading") or {}).get("filters") or [] if plan.get("kind") == "listing" else []
    names = [e.label for e in result.detail.entities]
    values = [str(v) for f in filters if f.get("operator") == "equals" for v in f.get("values") or []]
    asked = result.question.lower()
    written = [n for n in names if n and n.lower() in asked]
    inside = {n for n in written for v in values if n.lower() in v.lower() and n.lower() != v.lower()}
    written = [n for n in written if n not in inside]  # "Nancy" of "Nancy Edwards": said by the value
    lang = result.understanding.language
    bounds = [  # "size > 40": a listing's bounds are said too
        _bound_text(f.get("member", ""), f["operator"], v, lang)
        for f in filters
        if f.get("operator") in BOUNDS
        for v in f.get("values") or []
    ]
    return list(dict.fromkeys([*(written if plan.get("kind") == "listing" else names), *values, *bounds]))


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
    who = ", ".join(_named(result, plan))
    cut = table_cut(result)
    n = cut.total if cut is not None and cut.total is not None else len(detail.rows)  # the cut is said after
    ranked = _ranked_by(plan) if n else None
    if lang == "zh":
        whose = f"（{who}）" if who else ""
        if ranked:
            return f"{label(ranked[0], lang)}{_MOST[ranked[1]][1]}的 {fmt_number(n)} 条{noun}{whose}。"
        return f"找到 {fmt_number(n)} 条{noun}{whose}。" if n else f"没有找到符合条件的{noun}{whose}。"
    whose = f" for {who}" if who else ""
    one = noun[:-1] if n == 1 and noun.endswith("s") else noun
    if ranked:
        return f"The {fmt_number(n)} {one}{whose} with the {_MOST[ranked[1]][0]} {label(ranked[0], lang)}."
    return f"Found {fmt_number(n)} {one}{whose}." if n else f"No {noun} found{whose}."


# the end of an order the limited rows of a listing come from: (English, Chinese); by time, the newest or oldest
_MOST = {
    "desc": ("highest", "最高"),
    "asc": ("lowest", "最低"),
    "desc time": ("latest", "最新"),
    "asc time": ("earliest", "最早"),
}


def _ranked_by(plan: dict[str, Any]) -> tuple[str, str] | None:
    """ "the 10 worst departure delays": the column and the end of its order that chose the rows a listing's
    asked limit keeps ("desc", "asc", "desc time", "asc time"), else None."""
    reading = plan.get("reading") or {} if plan.get("kind") == "listing" else {}
    order = reading.get("order") or []
    if not order or not reading.get("limit"):
        return None
    member, direction = str(order[0][0]), str(order[0][1])
    return member, direction + (" time" if vocabulary().member_type(member) == "time" else "")


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
        facts += "; changes: " + ", ".join(
            f"{label(c['measure'], lang)} {fmt_change(c['change_pct'])}"
            for c in changes
            if c.get("change_pct") is not None
        )
    pred = dspy.Predict(AnswerText)(
        question=result.question,
        language=result.understanding.language,
        table=truncate_to_tokens("\n".join(lines), TABLE_TOKENS),
        facts=facts,
    )
    text = str(pred.answer).strip()
    allowed = table_numbers(table.columns, table.rows, fmts) | change_numbers(changes)
    allowed |= filter_numbers(
        [
            getattr(result.aggregate, "cube_query", None),  # "under 500": a declared filter
            (getattr(result.detail, "plan", None) or {}).get("cube_query"),
        ]
    )
    allowed |= question_numbers(result.question)  # "order 7": the number the question wrote
    allowed |= cut_numbers([c.to_dict() for c in result.cuts])  # "Found 7 orders": the counted total of a cut
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
        "intent": decision.intent,
        "intent_confidence": round(float(decision.confidence), 4),
        "intent_reasons": list(decision.reasons),
        "understanding": _plain(result.understanding),
        "sub_queries": result.sub_queries,
        "follow_up_of": result.follow_up_of,
        "spelling": [{"written": a, "read": b} for a, b in result.corrections],
        "bindings": [b.to_dict() for b in getattr(retrieval, "term_bindings", [])],
        "crag_grade": getattr(getattr(retrieval, "crag", None), "grade", None),
        "crag": _crag(retrieval),
        "retrieved": result.retrieval.get("fused", [])[:10],
        "context": _context(result.retrieval.get("context") or retrieval),
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
        "truncation": [c.to_dict() for c in result.cuts],  # every limit the rows stopped at: shown N of M
        "tie": result.tie.to_dict() if result.tie else None,  # the limit cuts inside a tie: N tied, M shown
    }
    if result.mixed is not None:  # both halves, also when joined: the table then has per-entity counts only
        prov["sections"] = result.mixed.sections
    return prov


def _crag(retrieval: Any) -> dict[str, Any] | None:
    """The CRAG gate's decision: grades before/after corrective retrieval, actions, missing words, passages."""
    crag = getattr(retrieval, "crag", None)
    return None if crag is None else asdict(crag)


def _context(retrieval: Any) -> dict[str, Any] | None:
    """The (RAG-Fusion) context generation used: the ids it rendered and its tokens per category."""
    context = getattr(retrieval, "context", None)
    if context is None:
        return None
    return {
        "included": list(context.included),
        "tokens": dict(context.tokens),
        "sub_queries_fused": "fusion" in getattr(retrieval, "timings_ms", {}),
    }


def _plain(value: Any) -> Any:
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    return value
