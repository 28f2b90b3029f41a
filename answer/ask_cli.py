"""``cubesage ask`` and ``cubesage regress``: one question from the shell, or a whole regression suite."""

from __future__ import annotations

import json
import time
from datetime import date, datetime
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from answer.console_table import rich_table
from answer.regress import INTENTS, OUTCOMES, CaseResult, SuiteError, load_suite, result_line, run_suite, summarize
from answer.regress_diff import Change, changes, previous_outcomes, shown, totals
from cubesage_core.settings import get_settings
from router.understanding.types import QuestionError

console = Console()
err_console = Console(stderr=True)


def _service() -> Any:
    """The answering service on the bootstrapped database, or a CLI error line (no model, no pgvector...)."""
    from answer.service import Cubesage
    from cubesage_core.cli import SETUP_ERRORS, bootstrap_or_exit, fail

    url = bootstrap_or_exit()
    try:
        return Cubesage(url=url)
    except SETUP_ERRORS as err:
        raise fail(err) from err


def _today(value: str | None) -> date | None:
    if value is None:
        return None
    try:
        return datetime.strptime(value, "%Y-%m-%d").date()
    except ValueError as err:
        raise typer.BadParameter(f"--today must be YYYY-MM-DD, got {value!r}") from err


def ask(
    question: str = typer.Argument(..., help="The question, in English or Chinese."),
    as_json: bool = typer.Option(False, "--json", help="Print the whole answer payload as JSON."),
    explain: bool = typer.Option(False, "--explain", help="Also print the provenance (intent, plan, SQL, timings)."),
    today: str | None = typer.Option(None, help="Resolve relative dates against this day (YYYY-MM-DD)."),
    mode: str | None = typer.Option(None, help="fast (templates) or llm (DSPy); default: llm when configured."),
    all_rows: bool = typer.Option(False, "--all", help="Print every row of the table (default: the first 50)."),
    csv_path: Path | None = typer.Option(None, "--csv", dir_okay=False, help="Also write the table to this CSV file."),
) -> None:
    """Ask one question; print the answer text, the table and (with --explain) where it came from."""
    day = _today(today)
    with _service() as service:
        try:
            payload = service.ask(question, today=day, mode=mode)
        except QuestionError as err:
            err_console.print(f"[red]{err.message}[/red]")
            raise typer.Exit(2) from err
    answer = payload.to_dict()
    if as_json:
        typer.echo(json.dumps(answer, ensure_ascii=False, default=str))
        return
    console.print(f"[bold]{answer['text']}[/bold]")
    table = answer["table"]
    if table["columns"]:
        view, note = rich_table(table, max_rows=None if all_rows else 50)
        console.print(view)
        count = table.get("row_count", len(table["rows"]))
        console.print(note or f"{count:,} row{'' if count == 1 else 's'}")
    if csv_path is not None:
        from answer.tables import to_csv

        csv_path.write_text(to_csv(table), encoding="utf-8")
        err_console.print(f"wrote {csv_path}")
    if explain:
        console.print_json(json.dumps(answer["provenance"], ensure_ascii=False, default=str))


MODES = {"fast": ("fast",), "llm": ("llm",), "both": ("fast", "llm")}


def regress(
    suite: Path = typer.Argument(..., exists=True, dir_okay=False, help="Suite YAML (today + cases)."),
    split: str = typer.Option("all", "--split", help="Cases of this split: dev, test or all."),
    as_json: bool = typer.Option(False, "--json", help="One JSON line per case, then a summary line."),
    mode: str = typer.Option("fast", "--mode", help="fast, llm (needs CUBESAGE_LLM_URL) or both, side by side."),
    against: Path | None = typer.Option(
        None,
        "--against",
        dir_okay=False,
        help="A previous run's --json output: also report the cases whose outcome changed (on the test split only "
        "their counts).",
    ),
) -> None:
    """Run a regression suite and report every case's outcome; exit code 2 only for a malformed suite."""
    try:
        spec = load_suite(suite).select(split)
        modes = MODES[mode] if mode in MODES else _bad_mode(mode)
        previous = previous_outcomes(against) if against is not None else None
    except SuiteError as err:
        err_console.print(f"[red]{err}[/red]")
        raise typer.Exit(2) from err
    if "llm" in modes and not get_settings().llm_url:
        err_console.print(
            f"[red]--mode {mode} needs an LLM endpoint: set CUBESAGE_LLM_URL (and _MODEL, _API_KEY)[/red]"
        )
        raise typer.Exit(2)
    started = time.perf_counter()
    with _service() as service:
        results = []
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.completed}/{task.total}"),
            TimeElapsedColumn(),
            console=err_console,
            disable=as_json,
        ) as progress:
            task = progress.add_task(f"{spec.name} ({spec.split}, {mode})", total=len(spec.cases) * len(modes))
            for result in run_suite(spec, service.ask, service.url, modes):
                results.append(result)
                progress.advance(task)
                if as_json:
                    typer.echo(result_line(result))
        elapsed = time.perf_counter() - started
        summaries = {
            m: summarize(
                [r for r in results if r.mode == m], elapsed, service.startup_ms, suite=spec.name, split=spec.split
            )
            for m in modes
        }
    summary = summaries[modes[0]] if len(modes) == 1 else summaries
    if as_json:
        typer.echo(json.dumps({"summary": summary}, ensure_ascii=False))
    elif len(modes) == 1:
        _print_report(results, summary)
    else:
        _print_side_by_side(results, summaries)
    if previous is not None:
        found = changes(previous, [r for r in results if r.mode == modes[0]])
        _print_changes(found, spec.split, as_json)


def _print_changes(found: list[Change], split: str, as_json: bool) -> None:
    """The cases whose outcome changed since the previous run; on the test split only how many."""
    if as_json:
        typer.echo(json.dumps(shown(found, split), ensure_ascii=False))
        return
    counts = totals(found)
    console.print(
        f"since the previous run: {counts['gained']} gained, {counts['lost']} lost, {counts['moved']} moved "
        "between other outcomes"
    )
    if split == "test":
        console.print("(test split: the cases are not shown; it is read by its totals)")
        return
    view = Table("id", "before", "after", "question")
    for c in found:
        view.add_row(c.id, c.before, c.after, c.question)
    if found:
        console.print(view)


def _bad_mode(mode: str) -> tuple[str, ...]:
    raise SuiteError(f"--mode must be fast, llm or both, got {mode!r}")


def _print_side_by_side(results: list[CaseResult], summaries: dict[str, dict[str, Any]]) -> None:
    """One row per case with its fast and LLM outcomes, then both modes' counts."""
    view = Table("id", "intent", "fast", "llm", "fast ms", "llm ms", "llm calls", "reason (where they differ)")
    by_case: dict[str, dict[str, CaseResult]] = {}
    for r in results:
        by_case.setdefault(r.id, {})[r.mode] = r
    for cid, pair in by_case.items():
        fast, llm = pair["fast"], pair["llm"]
        styled = [f"[{OUTCOME_STYLE[r.outcome]}]{r.outcome}[/{OUTCOME_STYLE[r.outcome]}]" for r in (fast, llm)]
        reason = "" if fast.outcome == llm.outcome else f"fast: {fast.reason} | llm: {llm.reason}"
        view.add_row(
            cid,
            fast.intent_expected,
            *styled,
            f"{fast.latency_ms:.0f}",
            f"{llm.latency_ms:.0f}",
            str((llm.llm or {}).get("calls", 0)),
            reason,
        )
    console.print(view)
    for mode, summary in summaries.items():
        cost = summary.get("llm") or {}
        console.print(
            f"{mode}: pass rate {_rate(summary['pass_rate'])}, wrong {summary['wrong']}, intent acc "
            f"{_rate(summary['intent_accuracy'])}, p50 {summary['latency_p50_ms']} ms, p95 "
            f"{summary['latency_p95_ms']} ms"
            + (
                f", {cost['calls_per_question']} LLM calls and "
                f"{cost['prompt_tokens_per_question'] + cost['completion_tokens_per_question']:.0f} tokens "
                f"per question, {cost['fallback_steps']} steps fell back"
                if cost
                else ""
            )
        )


OUTCOME_STYLE = {"passed": "green", "wrong": "bold red", "refused": "yellow", "failed": "red", "unchecked": "dim"}


def _print_report(results: list[CaseResult], summary: dict[str, Any]) -> None:
    """Per-case table (reasons of all but plain passes), then counts overall, per intent and per language."""
    view = Table("id", "split", "intent", "outcome", "ms", "reason")
    for r in results:
        style = OUTCOME_STYLE[r.outcome]
        view.add_row(
            r.id,
            r.split,
            f"{r.intent_got}" + ("" if r.intent_ok else f" (want {r.intent_expected})"),
            f"[{style}]{r.outcome}[/{style}]",
            f"{r.latency_ms:.0f}",
            "" if r.reason == "ok" else r.reason,
        )
    console.print(view)
    counts = Table(
        "group",
        "cases",
        *OUTCOMES,
        "checked",
        "pass rate",
        "intent acc",
        title=f"{summary['suite']} ({summary['split']})",
    )
    for column in counts.columns:  # whole headers and group names, also on a narrow or piped console
        column.no_wrap = True
        column.min_width = len(str(column.header))
    counts.columns[0].min_width = max(len(name) for name in INTENTS)
    groups = [("all", summary), *summary["by_intent"].items(), *summary["by_language"].items()]
    for name, c in groups:
        counts.add_row(
            name,
            str(c["cases"]),
            *(str(c[o]) for o in OUTCOMES),
            str(c["checked"]),
            _rate(c["pass_rate"]),
            _rate(c["intent_accuracy"]),
        )
    console.print(counts, crop=False)
    console.print(
        f"latency p50 {summary['latency_p50_ms']} ms, p95 {summary['latency_p95_ms']} ms; "
        f"refusal kind mismatches {summary['refusal_kind_mismatch']}; elapsed {summary['elapsed_s']} s"
    )


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"
