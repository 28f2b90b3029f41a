"""LLM mode of the whole service against the stub: the replayed dev suite, a slow endpoint, a dead endpoint.

The replay records (``tests/replay/demo_dev.jsonl``) are scripted replies, made by ``python -m
tests.replay.record`` (see its docstring): no real LLM is reachable here.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import SecretStr

from answer.regress import _p95, load_suite, run_suite, summarize
from cubesage_core.settings import REPO_ROOT, Settings
from tests.llm_stub import Replay, openai_stub

pytestmark = pytest.mark.integration
SUITE = REPO_ROOT / "demo" / "regress" / "suite.yaml"
UNRECORDED = ("d8-", "d9-", "d10-", "d11-")
RECORDS = REPO_ROOT / "tests" / "replay" / "demo_dev.jsonl"
SLOW_CASES = ("agg-001", "agg-022", "det-001", "mix-001", "mix-004", "uns-001", "cla-001")


def _service(pg_url: str, **llm: Any) -> Any:
    from answer.service import Cubesage

    return Cubesage(Settings(database_url=SecretStr(pg_url), **llm), url=pg_url)


def _asker(service: Any, answers: list[dict[str, Any]]) -> Any:
    def ask(question: str, **kwargs: Any) -> dict[str, Any]:
        answers.append(service.ask(question, **kwargs).to_dict())
        return answers[-1]

    return ask


@pytest.fixture(scope="module")
def dev_suite() -> Any:
    suite = load_suite(SUITE).select("dev")
    # blind batches 8 to 11 (d8- .. d11-) have no recorded replies yet: re-run python -m tests.replay.record
    return replace(suite, cases=[c for c in suite.cases if not c.id.startswith(UNRECORDED)])


def test_replayed_llm_run_of_the_dev_suite_passes(demo_ready: Any, pg_url: str, dev_suite: Any) -> None:
    """Every dev case in LLM mode (scripted replies) and in fast mode on the same database: LLM mode meets the
    dev split's targets and passes every case fast mode passes; each step answered by the LLM, except where
    the script recorded no reply."""
    replay = Replay.load(RECORDS)
    answers: list[dict[str, Any]] = []
    with openai_stub(replay) as stub, _service(pg_url, llm_url=stub.url, llm_model="openai/replay") as service:
        results = list(run_suite(dev_suite, _asker(service, answers), pg_url, ("llm", "fast")))
    llm, fast = [r for r in results if r.mode == "llm"], [r for r in results if r.mode == "fast"]
    summary = summarize(llm, 0.0, 0.0)
    failures = "\n".join(f"{r.id}: {r.outcome}: {r.reason}" for r in llm if not r.passed)
    reports = [a["provenance"].get("llm") for a in answers[::2]]  # the LLM-mode answers
    fallbacks = {r.id: [s for s in p["steps"] if s["mode"] != "llm"] for r, p in zip(llm, reports, strict=True) if p}
    changed = sorted({key.split("\n", 1)[0] for key in replay.changed})
    print(summary["llm"], f"prompts changed since recording: {len(set(replay.changed))} {changed}", failures, sep="\n")
    assert not replay.misses, f"requests without a record (re-run python -m tests.replay.record): {replay.misses[:3]}"
    assert all(reports), "every answer ran in LLM mode"
    fell_back = sum(len(s) for s in fallbacks.values())
    # steps fall back only where the script recorded no reply (its fast twin refuses; a re-ask is declined too)
    assert bool(fell_back) == bool(replay.declined) and fell_back <= len(replay.declined), fallbacks
    lost = [f"{r.id}: {r.outcome}: {r.reason}" for r, f in zip(llm, fast, strict=True) if f.passed and not r.passed]
    assert not lost, lost  # no case that fast mode answers right is lost in LLM mode
    assert summary["wrong"] <= sum(r.outcome == "wrong" for r in fast), failures
    assert summary["pass_rate"] >= 0.80 and summary["intent_accuracy"] >= 0.85, failures
    assert summary["llm"]["calls_per_question"] >= 4 and len(stub.requests) >= 4 * len(dev_suite.cases)


def _slow_run(pg_url: str, suite: Any, cases: tuple[str, ...], **llm: Any) -> tuple[list[Any], list[dict[str, Any]]]:
    answers: list[dict[str, Any]] = []
    picked = type(suite)(suite.name, suite.today, [c for c in suite.cases if c.id in cases])
    with (
        openai_stub(Replay.load(RECORDS), latency_s=1.0) as stub,
        _service(pg_url, llm_url=stub.url, llm_model="openai/slow", **llm) as service,
    ):
        results = list(run_suite(picked, _asker(service, answers), pg_url, ("llm",)))
    print([(r.id, r.latency_ms, (r.llm or {}).get("calls")) for r in results])
    assert [r.outcome for r in results] == ["passed"] * len(cases), [(r.id, r.reason) for r in results]
    return results, [a["provenance"]["llm"] for a in answers]


def test_a_slow_endpoint_answers_under_the_deadline(demo_ready: Any, pg_url: str, dev_suite: Any) -> None:
    """1 s per call, the default 8 s deadline: independent calls overlap, every call starts in time."""
    results, reports = _slow_run(pg_url, dev_suite, SLOW_CASES)
    assert all(start < 8.0 - 0.5 for r in reports for start in r["call_starts_s"])
    # on an idle machine every step answers in LLM mode; on a loaded one the deadline may hand the last
    # steps to fast mode, never any other fallback, and the answers are still right (checked above)
    modes = [s["mode"] for r in reports for s in r["steps"]]
    assert all(m == "llm" or m.startswith("fast (deadline: ") for m in modes), modes
    assert modes.count("llm") >= len(modes) * 3 // 4, modes
    assert _p95([r.latency_ms for r in results]) < 8000


def test_the_deadline_hands_the_steps_left_to_fast_mode(demo_ready: Any, pg_url: str, dev_suite: Any) -> None:
    """1 s per call, a 3 s deadline: no call starts after 2.5 s, the later steps answer in fast mode, and the
    answers are still right."""
    _, reports = _slow_run(pg_url, dev_suite, ("agg-001", "mix-004"), llm_deadline_s=3.0)
    assert all(start < 3.0 - 0.5 for r in reports for start in r["call_starts_s"])
    late = [s["mode"] for r in reports for s in r["steps"] if s["mode"] != "llm"]
    assert late and all(m.startswith("fast (deadline: ") for m in late), late


@pytest.fixture
def dead_endpoint() -> Iterator[str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    yield f"http://127.0.0.1:{port}/v1"


def test_a_dead_endpoint_answers_in_fast_mode_and_opens_the_breaker(
    demo_ready: Any, pg_url: str, dead_endpoint: str
) -> None:
    with _service(
        pg_url, llm_url=dead_endpoint, llm_model="openai/dead", llm_breaker_failures=3, llm_breaker_pause_s=600
    ) as service:
        first = service.ask("GMV by region in 2024", mode="llm").to_dict()
        second = service.ask("GMV by region in 2024", mode="llm").to_dict()
        fast = service.ask("GMV by region in 2024", mode="fast").to_dict()
    modes = [s["mode"] for s in first["provenance"]["llm"]["steps"]]
    assert first["table"]["rows"] == fast["table"]["rows"] == second["table"]["rows"] and fast["table"]["rows"]
    assert any(m.startswith("fast (llm error: LlmCallError") for m in modes)
    assert all(s["mode"].startswith("fast (llm paused: circuit open") for s in second["provenance"]["llm"]["steps"])
    assert second["provenance"]["llm"]["calls"] == 0 and fast["provenance"]["llm"] is None


def test_a_model_the_lm_refuses_answers_every_path_in_fast_mode(
    demo_ready: Any, pg_url: str, dead_endpoint: str
) -> None:
    """dspy.LM refuses to be built for the name: each LLM step of an aggregate, a detail and a mixed question
    falls back with the construction error in provenance, and the answers are fast mode's."""
    questions = (
        "GMV by region in 2024",
        "list the refunded orders of customer Li Wei",
        "top 5 products by GMV and their refund reasons",
    )
    with _service(pg_url, llm_url=dead_endpoint, llm_model="openai/") as service:
        asked = [(service.ask(q, mode="llm").to_dict(), service.ask(q, mode="fast").to_dict()) for q in questions]
    for llm, fast in asked:
        steps = llm["provenance"]["llm"]["steps"]
        assert llm["table"]["rows"] == fast["table"]["rows"] and fast["table"]["rows"], llm["text"]
        assert steps and all(
            s["mode"].startswith("fast (llm error: ValueError: ") and "no model id" in s["mode"] for s in steps
        ), steps
        assert llm["provenance"]["llm"]["calls"] == 0


def test_the_settings_turn_the_sag_and_crag_llm_steps_of_serving_off(demo_ready: Any, pg_url: str) -> None:
    """llm_sag_steps (SAG NER and selection in detail recall) and llm_crag_grade (the LLM's grade of the context):
    on by default in serving, off by setting; the detail answer is the same either way."""
    question = "list the refunded orders of customer Li Wei"
    llm_steps = {"sag_ner", "sag_select", "crag"}
    asked = {}
    with openai_stub(Replay.load(RECORDS)) as stub:
        for name, switches in (("on", {}), ("off", {"llm_sag_steps": False, "llm_crag_grade": False})):
            with _service(pg_url, llm_url=stub.url, llm_model="openai/replay", **switches) as service:
                asked[name] = service.ask(question, mode="llm").to_dict()
    steps = {name: {s["step"]: s["mode"] for s in a["provenance"]["llm"]["steps"]} for name, a in asked.items()}
    assert llm_steps <= set(steps["on"]) and all(steps["on"][s] == "llm" for s in llm_steps), steps
    assert not llm_steps & set(steps["off"]) and steps["off"].get("detail_sql") == "llm", steps
    assert asked["on"]["table"]["rows"] == asked["off"]["table"]["rows"] and asked["on"]["table"]["rows"]


def test_regress_cli_both_modes_side_by_side(
    demo_ready: Any, pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``cubesage regress --mode both``: each case asked in fast then LLM mode, a summary per mode with the LLM
    cost; the table view shows the two outcomes of a case on one row."""
    from typer.testing import CliRunner

    from answer.cli import app
    from cubesage_core.settings import get_settings

    raw = yaml.safe_load(SUITE.read_text(encoding="utf-8"))
    picked = [c for c in raw["cases"] if c["id"] in ("agg-001", "det-001", "uns-001")]
    suite = tmp_path / "suite.yaml"
    suite.write_text(yaml.safe_dump({**raw, "cases": picked}, allow_unicode=True), encoding="utf-8")
    with openai_stub(Replay.load(RECORDS)) as stub:
        for name, value in {"DATABASE_URL": pg_url, "LLM_URL": stub.url, "LLM_MODEL": "openai/replay"}.items():
            monkeypatch.setenv(f"CUBESAGE_{name}", value)
        get_settings.cache_clear()
        try:
            as_json = CliRunner().invoke(app, ["regress", str(suite), "--mode", "both", "--json"])
            table = CliRunner().invoke(app, ["regress", str(suite), "--mode", "both"])
        finally:
            get_settings.cache_clear()
    assert as_json.exit_code == 0 and table.exit_code == 0, as_json.output + table.output
    lines = [json.loads(line) for line in as_json.stdout.splitlines() if line.startswith("{")]
    cases, summary = lines[:-1], lines[-1]["summary"]
    assert [(c["id"], c["mode"]) for c in cases] == [
        (i, m) for i in ("agg-001", "det-001", "uns-001") for m in ("fast", "llm")
    ]
    assert all(c["outcome"] == "passed" for c in cases), [(c["id"], c["mode"], c["reason"]) for c in cases]
    assert all((c["llm"] is None) == (c["mode"] == "fast") for c in cases)
    assert set(summary) == {"fast", "llm"} and "llm" not in summary["fast"]
    assert summary["llm"]["llm"]["calls_per_question"] >= 4 and summary["llm"]["llm"]["fallback_steps"] == 0
    text = " ".join(table.stdout.split())  # the console wraps long lines
    assert "agg-001" in text and "fast: pass rate 100.0%" in text and "llm: pass rate 100.0%" in text, text
    assert "0 steps fell back" in text
