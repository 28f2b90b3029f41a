"""Regression suite runner: ask every case, judge it against its gold, summarise honestly.

Suite format (YAML)::

    name: demo                      # optional; else the warehouse, else the suite's folder name
    warehouse: retail               # optional pack name (warehouses/<name>/pack.yaml)
    today: 2025-06-30
    cases:
      - id: mix-001
        split: dev                  # required: dev or test
        question: "top 5 members by late fees and their loans"
        expect: {intent: mixed, answer_sql: "SELECT ...", detail_sql: "SELECT l.loan_id ...",
                 members: [loans.fee_sum], tables: [loans]}

Gold: ``answer_sql`` (the answer's rows, see ``answer.regress_compare``), ``detail_sql`` (mixed cases
only, required with ``answer_sql``: the keys of the detail rows), ``members`` (Cube members of the
query), ``tables`` (tables named by the provenance). A detail case whose only gold is ``tables``
("which table has the loan dates") is checked by its tables. Detail keys the answer states were cut at a
limit (``provenance.truncation``: shown N of M) hold when every shown key is a gold key and M covers the
gold keys; rows cut without saying so must hold every gold key. Every case gets one outcome:

* ``passed``: intent right and every gold check holds (mixed: the aggregate rows and the detail keys).
* ``wrong``: the system answered with rows/numbers that contradict the gold (the worst outcome).
* ``refused``: the system replied unsupported/clarify, or with an error message ("I can't answer
  that: ..."), where the gold expects an answer.
* ``failed``: anything else: a crash, no rows, the wrong intent, a missing Cube member or table.
* ``unchecked``: the case expects an answer but has no gold; never counted as passed.

For ``unsupported`` and ``clarify`` cases the gold is the kind of reply: a reply of either refusal
kind without rows passes (an ``unsupported`` reply to a ``clarify`` case, or the reverse, passes and
is counted in ``refusal_kind_mismatch``; intent accuracy still counts it as a miss); rows instead of a
refusal are ``wrong``.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

import psycopg
import yaml

from answer.regress_compare import Gold, compare, gold_query, gold_result, key_column
from answer.regress_ties import variants
from cubesage_core import db

INTENTS = ("aggregate", "detail", "mixed", "unsupported", "clarify")
REFUSALS = frozenset({"unsupported", "clarify"})
SPLITS = ("dev", "test")
OUTCOMES = ("passed", "wrong", "refused", "failed", "unchecked")
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]")


class SuiteError(ValueError):
    """The suite file is malformed."""


class Asker(Protocol):
    """``Cubesage.ask``: a question in, an answer payload (``to_dict()``) or its dict out."""

    def __call__(self, question: str, *, today: dt.date, mode: str) -> Any: ...


GoldRunner = Callable[[str], list[Gold]]  # gold SQL -> its rows (and ORDER BY keys), per tie-consistent variant


def language_of(text: str) -> str:
    """zh when the text has any CJK character, else en."""
    return "zh" if CJK.search(text) else "en"


@dataclass
class Case:
    id: str
    question: str
    intent: str
    split: str
    answer_sql: str | None = None
    detail_sql: str | None = None
    members: list[str] = field(default_factory=list)
    tables: list[str] = field(default_factory=list)

    @property
    def language(self) -> str:
        return language_of(self.question)

    @property
    def has_gold(self) -> bool:
        if self.intent in REFUSALS:
            return True
        return bool(self.answer_sql) or (self.intent == "detail" and bool(self.tables))


@dataclass
class Suite:
    name: str
    today: dt.date
    cases: list[Case]
    warehouse: str | None = None
    split: str = "all"

    def select(self, split: str) -> Suite:
        """The cases of one split (``dev``, ``test``) or all of them (``all``)."""
        if split == "all":
            return replace(self, split=split)
        if split not in SPLITS:
            raise SuiteError(f"unknown split {split!r}: dev, test or all")
        return replace(self, cases=[c for c in self.cases if c.split == split], split=split)


@dataclass
class CaseResult:
    id: str
    question: str
    split: str
    language: str
    intent_expected: str
    intent_got: str | None
    intent_ok: bool
    outcome: str
    reason: str
    latency_ms: float
    mode: str = "fast"  # the mode asked: fast | llm
    llm: dict[str, int] | None = None  # LLM calls, prompt/completion tokens, steps that fell back (provenance)

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"


# -- loading ---------------------------------------------------------------------------------------------


def load_suite(path: Path) -> Suite:
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as err:
        raise SuiteError(f"cannot read suite {path}: {err}") from err
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
        raise SuiteError(f"{path}: expected a mapping with 'today' and a list 'cases'")
    today = data.get("today")
    if isinstance(today, str):
        try:
            today = dt.date.fromisoformat(today)
        except ValueError as err:
            raise SuiteError(f"{path}: 'today' must be a date (YYYY-MM-DD)") from err
    if not isinstance(today, dt.date):
        raise SuiteError(f"{path}: 'today' must be a date (YYYY-MM-DD)")
    warehouse = data.get("warehouse")
    if warehouse is not None and (not isinstance(warehouse, str) or not warehouse):
        raise SuiteError(f"{path}: 'warehouse' must be a pack name")
    cases, seen = [], set()
    for i, raw in enumerate(data["cases"]):
        case = _case(raw, f"{path}: case #{i + 1}")
        if case.id in seen:
            raise SuiteError(f"{path}: duplicate case id {case.id}")
        seen.add(case.id)
        cases.append(case)
    name = str(data.get("name") or warehouse or path.resolve().parent.name)
    return Suite(name, today, cases, warehouse)


def _case(raw: Any, where: str) -> Case:
    if not isinstance(raw, dict):
        raise SuiteError(f"{where} must be a mapping")
    expect = raw.get("expect") or {}
    cid, question, intent, split = raw.get("id"), raw.get("question"), expect.get("intent"), raw.get("split")
    if not cid or not question or intent not in INTENTS:
        raise SuiteError(f"{where} needs id, question and expect.intent in {INTENTS}")
    if split not in SPLITS:
        raise SuiteError(f"{where} ({cid}) needs split: dev or test (got {split!r})")
    answer_sql, detail_sql = expect.get("answer_sql"), expect.get("detail_sql")
    if detail_sql and intent != "mixed":
        raise SuiteError(f"{where} ({cid}): detail_sql is the gold of a mixed case's detail half only")
    if intent == "mixed" and bool(answer_sql) != bool(detail_sql):
        raise SuiteError(f"{where} ({cid}): a mixed case needs both answer_sql and detail_sql, or neither")
    if intent in REFUSALS and (answer_sql or expect.get("members") or expect.get("tables")):
        raise SuiteError(f"{where} ({cid}): an {intent} case has no answer gold")
    return Case(
        str(cid),
        str(question),
        intent,
        split,
        answer_sql,
        detail_sql,
        list(expect.get("members") or []),
        list(expect.get("tables") or []),
    )


# -- judging ---------------------------------------------------------------------------------------------


@dataclass
class Problems:
    """What the gold checks found: ``mismatch`` contradicts the gold, ``missing`` is absent from the answer."""

    mismatch: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def cube_members(cube_query: dict[str, Any] | None) -> set[str]:
    if not cube_query:
        return set()
    out = set(cube_query.get("measures") or []) | set(cube_query.get("dimensions") or [])
    out |= set(cube_query.get("segments") or [])
    out |= {t.get("dimension") for t in cube_query.get("timeDimensions") or [] if t.get("dimension")}
    for f in cube_query.get("filters") or []:
        out |= {f.get("member") or f.get("dimension")} - {None}
    return out


def _rows(answer: dict[str, Any]) -> list[list[Any]]:
    """The answer table's rows; a share (``<measure>.share``, a fraction) or a measure formatted as a percent
    (0.972 shown as 97.20%) also as a percentage, the form gold SQL often computes it in (``100.0 * part /
    whole``)."""
    table = answer.get("table") or {}
    rows = list(table.get("rows") or [])
    formats = list(table.get("formats") or [])
    percents = [
        i
        for i, c in enumerate(table.get("columns") or [])
        if str(c).endswith(".share") or (i < len(formats) and formats[i] == "percent")
    ]
    if not percents:
        return rows
    return [[*row, *(row[i] * 100 if isinstance(row[i], int | float) else None for i in percents)] for row in rows]


def _section(answer: dict[str, Any], kind: str) -> dict[str, Any] | None:
    sections = (answer.get("provenance") or {}).get("sections") or []
    return next((s for s in sections if s.get("kind") == kind), None)


def _refusal(answer: dict[str, Any]) -> str | None:
    """Why the answer is a refusal (unsupported/clarify reply, or an error message), else None."""
    error = (answer.get("provenance") or {}).get("error")
    if error:
        return f"refused with {error.get('type')}: {error.get('message')}"
    if answer.get("intent") in REFUSALS:
        return f"replied {answer.get('intent')}"
    return None


def _check_rows(case: Case, answer: dict[str, Any], run_gold: GoldRunner, problems: Problems) -> None:
    """The answer rows against ``answer_sql``; mixed: the aggregate section, then the detail keys."""
    if not case.answer_sql:
        return
    golds = run_gold(case.answer_sql)
    if case.intent == "mixed":
        section = _section(answer, "aggregate")
        rows = section["rows"] if section else _rows(answer)
        _add(problems.mismatch, "aggregate: ", _any_variant(golds, lambda gold: compare(gold, rows)))
        _check_detail_keys(case, answer, run_gold, problems)
    elif case.intent == "detail" and golds[0].rows and len(golds[0].rows[0]) == 1:
        columns, rows, total = (answer.get("table") or {}).get("columns") or [], _rows(answer), _stated_total(answer)
        _add(
            problems.mismatch, "", _any_variant(golds, lambda gold: key_column(gold, columns, rows, stated_total=total))
        )
    else:
        _add(problems.mismatch, "", _any_variant(golds, lambda gold: compare(gold, _rows(answer))))


def _any_variant(golds: list[Gold], check: Callable[[Gold], str | None]) -> str | None:
    """None when the answer matches one of the gold's tie-consistent variants, else the first one's problem."""
    problems = [check(gold) for gold in golds]
    if None in problems:
        return None
    first = problems[0]
    return first if len(golds) == 1 else f"{first} (and in each of the {len(golds)} choices of a tie at a LIMIT)"


def _check_detail_keys(case: Case, answer: dict[str, Any], run_gold: GoldRunner, problems: Problems) -> None:
    section = _section(answer, "detail")
    if section is None:
        problems.missing.append("detail: the answer carries no detail rows")
        return
    columns, rows, total = section.get("columns") or [], section.get("rows") or [], _stated_total(answer)
    golds = run_gold(str(case.detail_sql))
    _add(
        problems.mismatch,
        "detail: ",
        _any_variant(golds, lambda gold: key_column(gold, columns, rows, stated_total=total)),
    )


def _stated_total(answer: dict[str, Any]) -> int | None:
    """The rows the answer says its detail has when it states they stop at a limit (else None)."""
    cuts = (answer.get("provenance") or {}).get("truncation") or []
    return next((int(c["total"]) for c in cuts if c.get("part") == "detail" and c.get("total") is not None), None)


def _add(into: list[str], prefix: str, problem: str | None) -> None:
    if problem:
        into.append(prefix + problem)


def _check_names(case: Case, answer: dict[str, Any], problems: Problems) -> None:
    """Cube members and provenance tables; tables are the answer gold of a detail case without answer_sql."""
    prov = answer.get("provenance") or {}
    missing = sorted(set(case.members) - cube_members(prov.get("cube_query")))
    if missing:
        problems.missing.append(f"members missing from the Cube query: {missing}")
    sql_text = " ".join(prov.get("sql") or []).lower()
    tables = {t.lower() for t in prov.get("tables") or []}
    absent = [t for t in case.tables if t.lower() not in tables and t.lower() not in sql_text]
    if absent:
        target = problems.missing if case.answer_sql else problems.mismatch
        target.append(f"tables missing from the provenance: {absent}")


def _judge_refusal_case(case: Case, answer: dict[str, Any]) -> tuple[str, str]:
    got, rows = answer.get("intent"), _rows(answer)
    if rows:
        return "wrong", f"answered with {len(rows)} rows (intent {got}) instead of a {case.intent} reply"
    if got == case.intent:
        return "passed", "ok"
    if got in REFUSALS:
        return "passed", f"{got} reply to a {case.intent} case (both are refusals)"
    return "failed", f"intent {got} != {case.intent}" + (f"; {_refusal(answer)}" if _refusal(answer) else "")


def judge(case: Case, answer: dict[str, Any] | None, error: str | None, run_gold: GoldRunner) -> tuple[str, str]:
    """(outcome, reason) of one case."""
    if error or answer is None:
        return "failed", error or "no answer"
    if case.intent in REFUSALS:
        return _judge_refusal_case(case, answer)
    refusal = _refusal(answer)
    if refusal:
        return "refused", refusal
    intent_note = [] if answer.get("intent") == case.intent else [f"intent {answer.get('intent')} != {case.intent}"]
    if not case.has_gold:
        return "unchecked", "; ".join([*intent_note, "no gold"])
    problems = Problems()
    _check_rows(case, answer, run_gold, problems)
    _check_names(case, answer, problems)
    reason = "; ".join([*intent_note, *problems.mismatch, *problems.missing]) or "ok"
    if problems.mismatch:
        return ("wrong", reason) if _rows(answer) else ("failed", f"no answer rows; {reason}")
    return ("failed", reason) if intent_note or problems.missing else ("passed", reason)


def llm_cost(answer: dict[str, Any] | None) -> dict[str, int] | None:
    """The LLM calls and tokens of an answer and how many of its LLM steps fell back (``provenance.llm``)."""
    report = ((answer or {}).get("provenance") or {}).get("llm")
    if not report:
        return None
    return {
        "calls": int(report.get("calls") or 0),
        "prompt_tokens": int(report.get("prompt_tokens") or 0),
        "completion_tokens": int(report.get("completion_tokens") or 0),
        "fallbacks": sum(str(s.get("mode", "")).startswith("fast") for s in report.get("steps") or []),
    }


def check_case(
    case: Case,
    answer: dict[str, Any] | None,
    error: str | None,
    run_gold: GoldRunner,
    latency_ms: float,
    mode: str = "fast",
) -> CaseResult:
    got = (answer or {}).get("intent")
    outcome, reason = judge(case, answer, error, run_gold)
    return CaseResult(
        case.id,
        case.question,
        case.split,
        case.language,
        case.intent,
        got,
        got == case.intent,
        outcome,
        reason,
        round(latency_ms, 1),
        mode,
        llm_cost(answer),
    )


# -- running ---------------------------------------------------------------------------------------------


def gold_runner(conn: Any) -> GoldRunner:
    """Runs gold SQL read-only on ``conn``, with the ORDER BY keys when the gold is ordered, once per
    tie-consistent variant of its nested ORDER BY ... LIMIT (``answer.regress_ties``)."""

    def rows_of(sql: str) -> list[list[Any]]:
        with conn.cursor() as cur:
            cur.execute("BEGIN TRANSACTION READ ONLY")
            try:
                cur.execute(sql)
                return [list(r) for r in cur.fetchall()]
            finally:
                cur.execute("ROLLBACK")

    def run(sql: str) -> list[Gold]:
        out = []
        for variant in variants(sql, rows_of):
            query = gold_query(variant)
            out.append(gold_result(query, rows_of(query.sql)))
        return out

    return run


def _ask(ask: Asker, case: Case, today: dt.date, mode: str) -> tuple[dict[str, Any] | None, str | None]:
    try:
        payload = ask(case.question, today=today, mode=mode)
    except Exception as exc:  # a crashing case is a failed case; the run goes on
        return None, f"{type(exc).__name__}: {exc}"
    return (payload.to_dict() if hasattr(payload, "to_dict") else payload), None


def run_suite(suite: Suite, ask: Asker, url: str, modes: tuple[str, ...] = ("fast",)) -> Iterator[CaseResult]:
    """Ask each case in each of ``modes`` (``ask(question, today=..., mode=...) -> payload``), yield the results
    (a case's modes one after the other)."""
    with db.connection(url) as conn:
        run_gold = gold_runner(conn)
        for case in suite.cases:
            for mode in modes:
                yield _run_case(case, ask, suite.today, mode, run_gold)


def _run_case(case: Case, ask: Asker, today: dt.date, mode: str, run_gold: GoldRunner) -> CaseResult:
    started = time.perf_counter()
    answer, error = _ask(ask, case, today, mode)
    latency = (time.perf_counter() - started) * 1000
    try:
        return check_case(case, answer, error, run_gold, latency, mode)
    except psycopg.Error as exc:  # a broken gold query is reported on its case, not fatal
        got = (answer or {}).get("intent")
        return CaseResult(
            case.id,
            case.question,
            case.split,
            case.language,
            case.intent,
            got,
            got == case.intent,
            "failed",
            f"gold SQL failed: {type(exc).__name__}: {exc}",
            round(latency, 1),
            mode,
        )


def result_line(result: CaseResult) -> str:
    return json.dumps(asdict(result), ensure_ascii=False, default=str)


# -- summary ---------------------------------------------------------------------------------------------


def _counts(results: list[CaseResult]) -> dict[str, Any]:
    """Outcome counts, checked count, pass rate over checked cases, intent accuracy."""
    n = len(results)
    counts: dict[str, Any] = {"cases": n, **{o: sum(r.outcome == o for r in results) for o in OUTCOMES}}
    checked = n - counts["unchecked"]
    counts["checked"] = checked
    counts["pass_rate"] = round(counts["passed"] / checked, 4) if checked else None
    counts["intent_accuracy"] = round(sum(r.intent_ok for r in results) / n, 4) if n else None
    return counts


def _p95(values: list[float]) -> float:
    """Nearest-rank 95th percentile (0 for no values)."""
    ordered = sorted(values)
    return round(ordered[max(math.ceil(0.95 * len(ordered)) - 1, 0)], 1) if ordered else 0.0


def summarize(
    results: list[CaseResult], elapsed_s: float, startup_ms: float, *, suite: str = "", split: str = "all"
) -> dict[str, Any]:
    latencies = [r.latency_ms for r in results]
    return {
        "suite": suite,
        "split": split,
        **_counts(results),
        "refusal_kind_mismatch": sum(r.passed and not r.intent_ok and r.intent_expected in REFUSALS for r in results),
        "by_intent": {
            i: _counts([r for r in results if r.intent_expected == i])
            for i in INTENTS
            if any(r.intent_expected == i for r in results)
        },
        "by_language": {
            lang: _counts([r for r in results if r.language == lang])
            for lang in ("en", "zh")
            if any(r.language == lang for r in results)
        },
        "latency_p50_ms": round(statistics.median(latencies), 1) if latencies else 0.0,
        "latency_p95_ms": _p95(latencies),
        "startup_ms": round(startup_ms, 1),
        "elapsed_s": round(elapsed_s, 2),
        **({"llm": _llm_summary(results)} if any(r.llm for r in results) else {}),
    }


def _llm_summary(results: list[CaseResult]) -> dict[str, Any]:
    """Mean LLM calls and tokens per question, overall and by expected intent, and the steps that fell back."""

    def mean(group: list[CaseResult]) -> dict[str, Any]:
        costs = [r.llm or {} for r in group]
        n = len(costs) or 1
        return {
            "questions": len(costs),
            **{
                f"{k}_per_question": round(sum(c.get(k, 0) for c in costs) / n, 2)
                for k in ("calls", "prompt_tokens", "completion_tokens")
            },
            "fallback_steps": sum(c.get("fallbacks", 0) for c in costs),
        }

    return {
        **mean(results),
        "by_intent": {
            i: mean([r for r in results if r.intent_expected == i])
            for i in INTENTS
            if any(r.intent_expected == i for r in results)
        },
    }
