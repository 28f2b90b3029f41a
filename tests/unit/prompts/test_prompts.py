"""Prompt snapshots: every DSPy signature rendered by the ChatAdapter with fixed inputs, compared with the
reviewed text in ``snapshots/``. A change of a prompt fails here until the snapshot is rewritten
(``CUBESAGE_UPDATE_SNAPSHOTS=1 pytest tests/unit/prompts``) and the diff reviewed with the change.

Prompts say nothing about any particular business: no word of the packaged warehouses' cube names or
glossary terms appears in a signature's instructions or field descriptions (those come from the model
at run time). Words of the query and schema languages (and "part") are allowed: ``QUERY_LANGUAGE``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import dspy
import pytest
import yaml

from cubesage_core.settings import REPO_ROOT

SNAPSHOTS = Path(__file__).with_name("snapshots")
# words of the query and schema languages (SQL, Cube, JSON Schema) and plain English that packs also use as names
QUERY_LANGUAGE = {
    "order",
    "limit",
    "filter",
    "measure",
    "dimension",
    "segment",
    "count",
    "line",
    "item",
    "type",
    "part",
}


def _signatures() -> dict[str, tuple[type, dict[str, Any]]]:
    from answer.synthesizer import AnswerText
    from fourengine.crag_llm import grade_signature
    from router.aggregate.program import WriteCubeQuery
    from router.decompose import _Decompose
    from router.detail.llm import DetailSql
    from router.intent._llm import ClassifyIntent
    from router.understanding._llm import ExtractSearchTerms
    from sag_index._dspy_programs import ExtractEvent, ExtractQueryEntities, SelectEvents

    question = {"question": "<question>"}
    return {
        "understand": (ExtractSearchTerms, question),
        "decompose": (_Decompose.signature(), question),
        "intent": (ClassifyIntent, {**question, "warehouse": "<subjects and measures>", "signals": "<signals>"}),
        "crag": (grade_signature(), {**question, "context": "<budgeted context>"}),
        "cube_query": (
            WriteCubeQuery,
            {
                **question,
                "members": "<members>",
                "bindings": "<bindings>",
                "time_ranges": "<time ranges>",
                "examples": "<examples>",
                "context": "<context>",
                "feedback": "none",
            },
        ),
        "detail_sql": (
            DetailSql,
            {**question, "tables": "<tables>", "entities": "<entities>", "bindings": "<bindings>", "feedback": "none"},
        ),
        "sag_extract": (ExtractEvent, {"heading": "<heading>", "chunk": "<chunk>"}),
        "sag_ner": (ExtractQueryEntities, question),
        "sag_select": (SelectEvents, {**question, "candidates": ["[0] <title>: <content>"], "top_k": 5}),
        "answer": (AnswerText, {**question, "language": "en", "table": "<table>", "facts": "<facts>"}),
    }


def _render(signature: type, inputs: dict[str, Any]) -> str:
    messages = dspy.ChatAdapter(use_json_adapter_fallback=False).format(signature, demos=[], inputs=inputs)
    return "\n\n".join(f"----- {m['role']}\n{m['content']}" for m in messages) + "\n"


@pytest.mark.parametrize("step", sorted(_signatures()))
def test_prompt_matches_its_reviewed_snapshot(step: str) -> None:
    signature, inputs = _signatures()[step]
    text = _render(signature, inputs)
    path = SNAPSHOTS / f"{step}.txt"
    if os.environ.get("CUBESAGE_UPDATE_SNAPSHOTS") == "1":
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no snapshot for {step}: run with CUBESAGE_UPDATE_SNAPSHOTS=1 and review it"
    assert text == path.read_text(encoding="utf-8"), (
        f"the {step} prompt changed: review it, then CUBESAGE_UPDATE_SNAPSHOTS=1 pytest tests/unit/prompts"
    )


def _words(text: str) -> set[str]:
    words = {w.lower() for w in re.findall(r"[A-Za-z]{3,}", text.replace("_", " "))}
    return words | {w[:-1] for w in words if w.endswith("s")} | {w[:-3] + "y" for w in words if w.endswith("ies")}


def _business_words() -> set[str]:
    """Cube names and titles, and one-word glossary terms (GMV, revenue...), of every packaged warehouse."""
    words: set[str] = set()
    for model in [REPO_ROOT / "demo" / "model", *sorted((REPO_ROOT / "warehouses").glob("*/model"))]:
        for path in model.glob("*.yml"):
            for cube in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("cubes", []):
                words |= _words(f"{cube.get('name', '')} {cube.get('title', '')}")
    for glossary in [REPO_ROOT / "demo" / "glossary.yaml", *sorted((REPO_ROOT / "warehouses").glob("*/glossary.yaml"))]:
        terms = (yaml.safe_load(glossary.read_text(encoding="utf-8")) or {}).get("terms", [])
        words |= {t["term"].lower() for t in terms if re.fullmatch(r"[A-Za-z]{3,}", str(t.get("term", "")))}
    return words - QUERY_LANGUAGE - {f"{w}s" for w in QUERY_LANGUAGE} - _PLAIN_ENGLISH


# words of cube titles that are plain English in any prompt ("Players and people": "names of people")
_PLAIN_ENGLISH = {"and", "or", "of", "the", "by", "per", "for", "in", "on", "to", "with", "people"}


def _own_text(signature: type) -> str:
    """The instructions and field descriptions (and typed outputs' schemas) of a signature, not its inputs."""
    parts = [signature.instructions]
    for field in {**signature.input_fields, **signature.output_fields}.values():
        parts.append(str((field.json_schema_extra or {}).get("desc", "")))
        annotation = field.annotation
        if hasattr(annotation, "model_json_schema"):
            parts.append(json.dumps(annotation.model_json_schema()))
    return "\n".join(parts)


def test_the_business_vocabulary_is_known() -> None:
    assert {"customer", "refund", "invoice", "supplier", "track"} <= _business_words()


@pytest.mark.parametrize("step", sorted(_signatures()))
def test_prompts_name_no_business(step: str) -> None:
    signature, _ = _signatures()[step]
    found = _words(_own_text(signature)) & _business_words()
    assert not found, f"the {step} prompt names business words {sorted(found)}: fill them from the model instead"
