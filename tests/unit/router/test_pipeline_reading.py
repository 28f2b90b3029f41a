"""How the pipeline combines the classifier's intent with the parser's reading (``_with_reading``)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from cube_models.model import load_model
from router.intent.types import IntentDecision
from router.parse import Knowledge, build_lexicon
from router.pipeline import _with_reading
from tests.unit.router.test_parse import MODEL, Values, read

ENV: Any = SimpleNamespace(warehouse=SimpleNamespace(nouns=[], values=[], tables={}))


@pytest.fixture(scope="module")
def knowledge(tmp_path_factory: pytest.TempPathFactory) -> Knowledge:
    folder: Path = tmp_path_factory.mktemp("model")
    (folder / "shop.yml").write_text(MODEL, encoding="utf-8")
    model = load_model(folder)
    return Knowledge(model, build_lexicon(model, [], Values({})))


def test_an_aggregate_reading_with_a_clause_about_its_rows_is_mixed(knowledge: Knowledge) -> None:
    refused = IntentDecision("unsupported", 0.5, ["nothing binds"])
    mixed = _with_reading(refused, read(knowledge, "how many old nations are there, and which ones are they?"), ENV)
    alone = _with_reading(refused, read(knowledge, "how many old nations are there?"), ENV)
    assert (mixed.intent, alone.intent) == ("mixed", "aggregate")
