"""``cubesage bench router-fast``: latency of the fast (no LLM, no database) router steps per question.

Stages timed per question: ``understand`` (normalise, terms, time, comparisons, ranking, group-by),
``classify_intent``, ``decompose`` and ``build_cube_query`` (slot filling over the Cube model). Bindings
for the cube-query step come from an offline exact lookup of the demo glossary terms/synonyms in the
question (a stand-in for engine R, so this benchmark needs no database). JSON lines: one per stage with
p50/p95/max ms, then a summary with the intents found.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

import yaml

from cube_models.model import SemanticModel, load_model
from cubesage_core.settings import REPO_ROOT
from router.aggregate import AggregateError, build_cube_query
from router.decompose import decompose
from router.intent import IntentSignals, classify_intent
from router.understanding import QuestionError, understand


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3) if ordered else 0.0


def _glossary_bindings(path: Path) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for term in yaml.safe_load(path.read_text())["terms"]:
        binding = {
            "term_id": term["id"],
            "canonical_term": term["term"],
            "mapped_asset_type": term["maps_to"].split(":", 1)[0],
            "mapped_asset_id": term["maps_to"],
        }
        if term.get("filter_value") is not None:
            binding["filter_value"] = str(term["filter_value"])
        for word in [term["term"], *term.get("synonyms", [])]:
            out.append((str(word).lower(), binding))
    return sorted(out, key=lambda item: -len(item[0]))


def _bind(question: str, lexicon: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    text, found = question.lower(), {}
    for word, binding in lexicon:
        if len(word) > 1 and word in text and binding["term_id"] not in found:
            found[binding["term_id"]] = binding
            text = text.replace(word, " ")
    return list(found.values())


def run(suite: Path | None, repeat: int = 20) -> None:
    suite = suite or REPO_ROOT / "demo" / "regress" / "suite.yaml"
    data = yaml.safe_load(suite.read_text())
    today = date.fromisoformat(str(data.get("today", "2025-06-30")))
    questions = [c["question"] for c in data["cases"]]
    model = load_model(REPO_ROOT / "demo" / "model")
    lexicon = _glossary_bindings(REPO_ROOT / "demo" / "glossary.yaml")
    started = time.perf_counter()
    understand("warm up jieba 华东", today, use_llm=False)
    warmup_ms = (time.perf_counter() - started) * 1000
    timings: dict[str, list[float]] = {"understand": [], "intent": [], "decompose": [], "cube_query": []}
    intents: Counter[str] = Counter()
    errors = 0
    for question in questions:
        intent, failed = _time_question(question, _bind(question, lexicon), model, today, repeat, timings)
        errors += failed
        if intent is not None:
            intents[intent] += 1
    for stage, values in timings.items():
        print(
            json.dumps(
                {
                    "bench": "router-fast",
                    "stage": stage,
                    "n": len(values),
                    "p50_ms": _pct(values, 0.5),
                    "p95_ms": _pct(values, 0.95),
                    "max_ms": round(max(values, default=0.0), 3),
                }
            ),
            flush=True,
        )
    total = [sum(v) for v in zip(timings["understand"], timings["intent"], timings["decompose"], strict=False)]
    print(
        json.dumps(
            {
                "bench": "router-fast",
                "summary": {
                    "questions": len(questions),
                    "repeat": repeat,
                    "jieba_warmup_ms": round(warmup_ms, 1),
                    "understand_intent_decompose_p50_ms": _pct(total, 0.5),
                    "understand_intent_decompose_p95_ms": _pct(total, 0.95),
                    "intents": dict(intents),
                    "question_errors": errors,
                },
            }
        ),
        flush=True,
    )


def _time_question(
    question: str,
    bindings: list[dict[str, Any]],
    model: SemanticModel,
    today: date,
    repeat: int,
    timings: dict[str, list[float]],
) -> tuple[str | None, int]:
    """``repeat`` timed runs of the stages on one question (times appended to ``timings``): the intent of
    the first run (None when the question was refused before it) and 1 when the question was refused."""
    signals = IntentSignals(
        metric_bindings=[b["mapped_asset_id"] for b in bindings if b["mapped_asset_type"] == "metric"]
    )
    intent = None
    for i in range(repeat):
        mark = time.perf_counter()
        try:
            u = understand(question, today, use_llm=False)
        except QuestionError:
            return intent, 1
        timings["understand"].append((time.perf_counter() - mark) * 1000)
        mark = time.perf_counter()
        decision = classify_intent(u, signals, use_llm=False)
        timings["intent"].append((time.perf_counter() - mark) * 1000)
        mark = time.perf_counter()
        decompose(u, use_llm=False)
        timings["decompose"].append((time.perf_counter() - mark) * 1000)
        if i == 0:
            intent = decision.intent
        if decision.intent in ("aggregate", "mixed") and signals.metric_bindings:
            mark = time.perf_counter()
            with contextlib.suppress(AggregateError):
                build_cube_query(u, {"bindings": bindings}, model, use_llm=False)
            timings["cube_query"].append((time.perf_counter() - mark) * 1000)
    return intent, 0
