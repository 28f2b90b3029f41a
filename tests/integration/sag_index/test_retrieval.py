"""The 8-step retrieval on a small multi-hop corpus, on both backends; LLM steps through the stub."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cubesage_core.embeddings import get_embedder
from cubesage_core.llm import using_settings
from cubesage_core.settings import Settings
from sag_index.backends.base import VectorStore
from sag_index.loaders import make_chunk
from sag_index.pipeline import index_chunks
from sag_index.processor import FastProcessor
from sag_index.retrieval import RetrievalParams, SagRetriever
from tests.integration.sag_index.conftest import BACKENDS, fresh_database, make_store
from tests.llm_stub import dspy_reply, openai_stub

pytestmark = pytest.mark.integration


def _settings(url: str) -> Settings:
    return Settings(llm_url=url, llm_model="openai/stub", llm_timeout_s=10.0)


# "Where was the director of Moonfall Harbor born?": the film page names the director; the director's
# page (the answer) shares no words with the question beyond his name -> reachable only by the graph.
_FIRST = ["Anna", "Boris", "Clara", "Dmitri", "Elena", "Felix", "Greta", "Hugo", "Irene", "Jonas"]
_LAST = ["Abbot", "Brenner", "Castell", "Dorne", "Eastwick", "Falk"]
CORPUS = {
    "Moonfall Harbor": "Moonfall Harbor is a 1987 drama film directed by Tobias Wrenfield. The film follows "
    "a lighthouse keeper during a storm.",
    "Tobias Wrenfield": "Tobias Wrenfield grew up in Kestrel Bay, a fishing village, painting boats before "
    "he moved into theatre.",
    "Kestrel Bay": "Kestrel Bay is a fishing village on a rocky coast, known for its painted boats.",
    # distractors that resemble the question far more than the bridge page does
    **{
        f"Harbor Story {i}": f"Harbor Story {i} is a {1950 + i} drama film directed by {f} {la}, who was born in "
        f"a harbor town where the director was born and raised."
        for i, (f, la) in enumerate((f, la) for f in _FIRST for la in _LAST)
    },
}
QUESTION = "Where was the director of Moonfall Harbor born?"


@pytest.fixture(scope="module", params=BACKENDS)
def indexed(request: pytest.FixtureRequest, pg_url: str) -> Iterator[tuple[str, VectorStore]]:
    url = fresh_database(pg_url, "sag_retrieval")
    store = make_store(request.param, request, url)
    chunks = [make_chunk("mini", f"{t}\n{text}", heading=t) for t, text in CORPUS.items()]
    report = index_chunks(chunks, url, store, FastProcessor(), get_embedder(), batch_size=8)
    assert report.events_written == len(CORPUS)
    yield url, store
    store.reset()
    store.close()


def _titles(result) -> list[str]:
    return [e.title for e in result.events]


def test_expansion_brings_in_the_bridge_page(indexed: tuple[str, VectorStore]) -> None:
    url, store = indexed
    retriever = SagRetriever(url, store)
    with_hops = retriever.retrieve(QUESTION, RetrievalParams(top_k=3))
    assert "Moonfall Harbor" in _titles(with_hops)[:2]
    assert "Tobias Wrenfield" in _titles(with_hops)
    wrenfield = next(e for e in with_hops.events if e.title == "Tobias Wrenfield")
    assert wrenfield.hop == 1  # injected by the expansion, not recalled by kNN/BM25
    steps = {s.name: s for s in with_hops.steps}
    assert wrenfield.event_id in {c["event_id"] for c in steps["5_multihop_expansion"].candidates}
    no_hops = retriever.retrieve(QUESTION, RetrievalParams(top_k=10, max_hops=0))
    assert "Tobias Wrenfield" not in _titles(no_hops)
    assert not {s.name: s for s in no_hops.steps}["5_multihop_expansion"].candidates
    retriever.close()


def test_every_step_is_inspectable(indexed: tuple[str, VectorStore]) -> None:
    url, store = indexed
    retriever = SagRetriever(url, store)
    result = retriever.retrieve(QUESTION, RetrievalParams(top_k=5))
    explain = result.explain()
    assert [s["name"] for s in explain["steps"]] == [
        "1_ner",
        "2_entity_recall",
        "3_event_recall",
        "4_event_details",
        "5_multihop_expansion",
        "6_coarse_rerank",
        "7_selection",
        "8_chunk_backtrack",
    ]
    assert all(s["ms"] >= 0 for s in explain["steps"])
    ner = explain["steps"][0]["candidates"]
    assert ner, "the question names Moonfall Harbor"
    assert len(explain["steps"][5]["candidates"]) <= 100
    chunk_ids = [c["chunk_id"] for c in result.chunks]
    assert len(chunk_ids) == len(set(chunk_ids)) == len(result.events) <= 5
    assert result.modes == {"ner": "fast", "selection": "fast"}
    retriever.close()


def test_llm_mode_ner_and_selection(indexed: tuple[str, VectorStore]) -> None:
    url, store = indexed

    def script(body: dict) -> str:
        prompt = body["messages"][-1]["content"]
        if "candidates" in prompt:  # selection: pick the candidate titled Tobias Wrenfield, then the film
            wanted = [
                i for i in range(100) if f"[{i}] Tobias Wrenfield:" in prompt or f"[{i}] Moonfall Harbor:" in prompt
            ]
            return dspy_reply(selected=sorted(wanted, key=lambda i: f"[{i}] Tobias" not in prompt))
        return dspy_reply(entities=["Moonfall Harbor"])

    with openai_stub(script) as stub, using_settings(_settings(stub.url)):
        retriever = SagRetriever.with_llm(url, store)
        result = retriever.retrieve(QUESTION, RetrievalParams(top_k=2))
        retriever.close()
    assert result.modes == {"ner": "llm", "selection": "llm"}
    assert _titles(result) == ["Tobias Wrenfield", "Moonfall Harbor"]
    assert len(stub.requests) == 2


def test_llm_failure_falls_back_to_fast(indexed: tuple[str, VectorStore]) -> None:
    url, store = indexed
    with openai_stub(["not a DSPy reply"]) as stub, using_settings(_settings(stub.url)):
        retriever = SagRetriever.with_llm(url, store)
        result = retriever.retrieve(QUESTION, RetrievalParams(top_k=3))
        retriever.close()
    assert all(mode.startswith("fast (llm error: ") for mode in result.modes.values()), result.modes
    assert "Moonfall Harbor" in _titles(result)
