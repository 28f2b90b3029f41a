"""Changes since a previous run (answer.regress_diff, `cubesage regress --against`): outcomes read from a
previous --json run, gains and losses first, and on the test split only their counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from answer.regress import CaseResult, SuiteError
from answer.regress_diff import changes, previous_outcomes, shown


def _result(case_id: str, outcome: str) -> CaseResult:
    return CaseResult(case_id, f"question {case_id}", "dev", "en", "aggregate", "aggregate", True, outcome, "", 1.0)


def _previous(tmp_path: Path, outcomes: dict[str, str]) -> Path:
    path = tmp_path / "prev.jsonl"
    lines = [json.dumps({"id": i, "outcome": o, "question": "q"}) for i, o in outcomes.items()]
    path.write_text("\n".join([*lines, json.dumps({"summary": {"cases": len(outcomes)}})]) + "\n", encoding="utf-8")
    return path


def test_changed_outcomes_are_reported_gains_and_losses_first(tmp_path: Path) -> None:
    previous = previous_outcomes(_previous(tmp_path, {"a": "refused", "b": "passed", "c": "wrong", "d": "passed"}))
    now = [_result("a", "passed"), _result("b", "wrong"), _result("c", "refused"), _result("d", "passed")]
    found = changes(previous, [*now, _result("new", "passed")])  # a case the previous run lacks is no change
    assert [(c.id, c.kind) for c in found] == [("a", "gained"), ("b", "lost"), ("c", "moved")]


def test_the_test_split_shows_only_how_many_changed(tmp_path: Path) -> None:
    found = changes({"a": "refused", "b": "passed"}, [_result("a", "passed"), _result("b", "wrong")])
    assert shown(found, "test") == {"changes": {"totals": {"gained": 1, "lost": 1, "moved": 0}}}
    assert [c["id"] for c in shown(found, "dev")["changes"]["cases"]] == ["a", "b"]  # type: ignore[index]


@pytest.mark.parametrize("body", ["", "not json\n", json.dumps({"summary": {}}) + "\n"])
def test_a_file_that_is_no_previous_run_is_a_clear_error(tmp_path: Path, body: str) -> None:
    path = tmp_path / "prev.jsonl"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(SuiteError, match="regress --json"):
        previous_outcomes(path)
    with pytest.raises(SuiteError, match="cannot read"):
        previous_outcomes(tmp_path / "missing.jsonl")


def test_cli_exits_2_on_a_bad_previous_run_before_starting_anything(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from answer.cli import app

    suite = tmp_path / "suite.yaml"
    suite.write_text("today: 2025-06-30\ncases: []\n", encoding="utf-8")
    bad = tmp_path / "prev.jsonl"
    bad.write_text("nope\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["regress", str(suite), "--against", str(bad)])
    assert result.exit_code == 2 and "regress --json" in result.output
