"""Labelled calibration questions from a regression suite's ``dev`` split (``fourengine.calibration``).

Answerable cases (aggregate, detail, mixed) are in-domain questions about the members and tables their gold
names; ``unsupported`` cases are questions the warehouse does not answer; ``clarify`` cases are neither.
Only the dev split is read: test cases stay unseen.
"""

from __future__ import annotations

import json
from pathlib import Path

from answer.regress import load_suite
from fourengine.calibration import Sample

ANSWERABLE = ("aggregate", "detail", "mixed")


def suite_samples(path: Path, split: str = "dev") -> list[Sample]:
    suite = load_suite(path).select(split)
    out: list[Sample] = []
    for case in suite.cases:
        if case.intent == "unsupported":
            out.append(Sample(case.question, in_domain=False))
        elif case.intent in ANSWERABLE:
            gold = {f"{kind}:{m}" for m in case.members for kind in ("metric", "dimension", "segment")}
            gold |= {f"table:{t}" for t in case.tables}
            key = json.dumps(sorted(case.members)) if case.members else None
            out.append(Sample(case.question, frozenset(gold), query_key=key))
    return out
