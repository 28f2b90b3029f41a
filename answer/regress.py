"""Regression suite runner: ask every case, check intent, gold rows, Cube members and tables; summarise.

Suite format (YAML)::

    today: 2025-06-30
    cases:
      - id: agg-001
        question: "What was GMV in East China in March 2024?"
        expect: {intent: aggregate, answer_sql: "SELECT ...", members: [order_items.gmv], tables: [fact_refund]}

An answer passes when every gold row is found in the answer table (numbers within 1e-4 relative,
dates compared as ISO text, strings case-insensitively) and both have the same number of rows.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml

from cubesage_core import db

INTENTS = ("aggregate", "detail", "mixed", "unsupported", "clarify")
REL_TOL = 1e-4


class SuiteError(ValueError):
    """The suite file is malformed."""


@dataclass
class Case:
    id: str
    question: str
    intent: str
    answer_sql: str | None = None
    members: list[str] = field(default_factory=list)
    tables: list[str] = field(default_factory=list)


@dataclass
class Suite:
    today: dt.date
    cases: list[Case]


@dataclass
class CaseResult:
    id: str
    question: str
    intent_expected: str
    intent_got: str | None
    intent_ok: bool
    answer_ok: bool | None
    passed: bool
    reason: str
    latency_ms: float


def load_suite(path: Path) -> Suite:
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as err:
        raise SuiteError(f"cannot read suite {path}: {err}") from err
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
        raise SuiteError(f"{path}: expected a mapping with 'today' and a list 'cases'")
    today = data.get("today")
    if isinstance(today, str):
        today = dt.date.fromisoformat(today)
    if not isinstance(today, dt.date):
        raise SuiteError(f"{path}: 'today' must be a date (YYYY-MM-DD)")
    cases, seen = [], set()
    for i, raw in enumerate(data["cases"]):
        expect = (raw or {}).get("expect") or {}
        cid, question, intent = raw.get("id"), raw.get("question"), expect.get("intent")
        if not cid or not question or intent not in INTENTS:
            raise SuiteError(f"{path}: case #{i + 1} needs id, question and expect.intent in {INTENTS}")
        if cid in seen:
            raise SuiteError(f"{path}: duplicate case id {cid}")
        seen.add(cid)
        cases.append(Case(cid, question, intent, expect.get("answer_sql"), list(expect.get("members") or []),
                          list(expect.get("tables") or [])))
    return Suite(today, cases)


# -- answer comparison -----------------------------------------------------------------------------------

def _num(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float | Decimal):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.replace(",", ""))
        except ValueError:
            return None
    return None


def _text(value: Any) -> str:
    """Case-folded text; dates and timestamps as ISO ("2024-03-01", "2024-03-01 10:00:00")."""
    s = value.isoformat() if isinstance(value, dt.date) else str(value)
    s = s.strip().lower()
    if len(s) >= 10 and s[4] == "-" and s[7] == "-" and s[:4].isdigit():
        rest = s[10:].lstrip("t ").removesuffix("z").removesuffix(".000")
        return s[:10] if rest in ("", "00:00:00", "00:00:00+00:00") else f"{s[:10]} {rest[:8]}"
    return s


def cell_matches(gold: Any, got: Any) -> bool:
    g, a = _num(gold), _num(got)
    if g is not None and a is not None and not isinstance(gold, str):
        if g == a:
            return True
        return math.isclose(g, a, rel_tol=REL_TOL, abs_tol=1e-9)
    return gold is not None and got is not None and _text(gold) == _text(got)


def row_found(gold_row: list[Any], answer_rows: list[list[Any]]) -> bool:
    return any(all(any(cell_matches(g, a) for a in row) for g in gold_row if g is not None) for row in answer_rows)


def compare(gold_rows: list[list[Any]], answer_rows: list[list[Any]]) -> str | None:
    """None when the answer matches the gold rows, else why not."""
    if len(gold_rows) != len(answer_rows):
        return f"row count {len(answer_rows)} != gold {len(gold_rows)}"
    for row in gold_rows:
        if not row_found(row, answer_rows):
            return f"gold row {[_text(v) if _num(v) is None else _num(v) for v in row]} not in answer"
    return None


def cube_members(cube_query: dict[str, Any] | None) -> set[str]:
    if not cube_query:
        return set()
    out = set(cube_query.get("measures") or []) | set(cube_query.get("dimensions") or [])
    out |= set(cube_query.get("segments") or [])
    out |= {t.get("dimension") for t in cube_query.get("timeDimensions") or [] if t.get("dimension")}
    for f in cube_query.get("filters") or []:
        out |= {f.get("member") or f.get("dimension")} - {None}
    return out


# -- running ---------------------------------------------------------------------------------------------

def gold_rows(conn: Any, sql: str) -> list[list[Any]]:
    with conn.cursor() as cur:
        cur.execute("BEGIN TRANSACTION READ ONLY")
        try:
            cur.execute(sql)
            return [list(r) for r in cur.fetchall()]
        finally:
            cur.execute("ROLLBACK")


def check_case(case: Case, answer: dict[str, Any] | None, error: str | None, conn: Any,
               latency_ms: float) -> CaseResult:
    got = (answer or {}).get("intent")
    intent_ok = got == case.intent
    reasons: list[str] = [] if intent_ok else [f"intent {got} != {case.intent}"]
    if error:
        reasons.append(error)
    answer_ok: bool | None = None
    if case.answer_sql:
        if answer is None:
            answer_ok = False
        else:
            why = compare(gold_rows(conn, case.answer_sql), answer["table"]["rows"])
            answer_ok = why is None
            if why:
                reasons.append(why)
    prov = (answer or {}).get("provenance") or {}
    missing = set(case.members) - cube_members(prov.get("cube_query"))
    if missing:
        reasons.append(f"members missing from the Cube query: {sorted(missing)}")
    sql_text = " ".join(prov.get("sql") or []).lower()
    tables = {t.lower() for t in prov.get("tables") or []}
    missing_tables = [t for t in case.tables if t.lower() not in tables and t.lower() not in sql_text]
    if missing_tables:
        reasons.append(f"tables missing from the provenance: {missing_tables}")
    passed = intent_ok and answer_ok is not False and not missing and not missing_tables and not error
    return CaseResult(case.id, case.question, case.intent, got, intent_ok, answer_ok, passed,
                      "; ".join(reasons) or "ok", round(latency_ms, 1))


def run_suite(suite: Suite, ask: Callable[..., Any], url: str) -> Iterator[CaseResult]:
    """Ask each case (``ask(question, today=..., mode="fast") -> payload``), yield its result."""
    with db.connection(url) as conn:
        for case in suite.cases:
            started = time.perf_counter()
            answer, error = None, None
            try:
                payload = ask(case.question, today=suite.today, mode="fast")
                answer = payload.to_dict() if hasattr(payload, "to_dict") else payload
                err = (answer.get("provenance") or {}).get("error")
                if err and case.intent not in ("unsupported", "clarify"):
                    error = f"{err.get('type')}: {err.get('message')}"
            except Exception as exc:  # a crashing case is a failed case; the run goes on
                error = f"{type(exc).__name__}: {exc}"
            latency = (time.perf_counter() - started) * 1000
            yield check_case(case, answer, error, conn, latency)


def summarize(results: list[CaseResult], elapsed_s: float, startup_ms: float) -> dict[str, Any]:
    n = len(results)
    checked = [r for r in results if r.answer_ok is not None]
    lat = sorted(r.latency_ms for r in results)

    def pct(p: float) -> float:
        return round(lat[min(math.ceil(p * len(lat)) - 1, len(lat) - 1)], 1) if lat else 0.0

    return {
        "cases": n, "passed": sum(r.passed for r in results), "failed": sum(not r.passed for r in results),
        "intent_accuracy": round(sum(r.intent_ok for r in results) / n, 4) if n else 0.0,
        "answer_checked": len(checked),
        "answer_accuracy": round(sum(bool(r.answer_ok) for r in checked) / len(checked), 4) if checked else None,
        "latency_p50_ms": round(statistics.median(lat), 1) if lat else 0.0, "latency_p95_ms": pct(0.95),
        "startup_ms": round(startup_ms, 1), "elapsed_s": round(elapsed_s, 2),
    }


def result_line(result: CaseResult) -> str:
    return json.dumps(asdict(result), ensure_ascii=False)
