"""What changed since a previous run of a suite (``cubesage regress --against PREV.jsonl``): each case whose
outcome differs from the one a previous ``--json`` run recorded, gains (now passed) and losses (passed before)
first. On the ``test`` split only the counts are given: the protocol reads that split by its totals, so which
cases moved is not shown (docs: ../shared/EVALUATION.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from answer.regress import CaseResult, SuiteError


@dataclass(frozen=True)
class Change:
    id: str
    before: str
    after: str
    question: str

    @property
    def kind(self) -> str:
        if self.after == "passed":
            return "gained"
        return "lost" if self.before == "passed" else "moved"


def previous_outcomes(path: Path) -> dict[str, str]:
    """Case id -> outcome of a previous ``--json`` run (its summary line and blank lines skipped)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as err:
        raise SuiteError(f"cannot read the previous run {path}: {err.strerror}") from err
    outcomes: dict[str, str] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise SuiteError(f"{path}:{number} is no JSON line of `cubesage regress --json`") from err
        if isinstance(record, dict) and "id" in record and "outcome" in record:
            outcomes[str(record["id"])] = str(record["outcome"])
    if not outcomes:
        raise SuiteError(f"{path} holds no case lines: pass the output of `cubesage regress --json`")
    return outcomes


def changes(previous: dict[str, str], results: list[CaseResult]) -> list[Change]:
    """The cases of ``results`` whose outcome differs from ``previous`` (cases it lacks are left out), gains
    and losses first."""
    found = [
        Change(r.id, previous[r.id], r.outcome, r.question)
        for r in results
        if r.id in previous and previous[r.id] != r.outcome
    ]
    order = {"gained": 0, "lost": 1, "moved": 2}
    return sorted(found, key=lambda c: order[c.kind])


def totals(found: list[Change]) -> dict[str, int]:
    return {kind: sum(c.kind == kind for c in found) for kind in ("gained", "lost", "moved")}


def shown(found: list[Change], split: str) -> dict[str, object]:
    """The JSON line of the changes: their totals, and on any split but ``test`` each change."""
    line: dict[str, object] = {"totals": totals(found)}
    if split != "test":
        line["cases"] = [{"id": c.id, "before": c.before, "after": c.after, "question": c.question} for c in found]
    return {"changes": line}
