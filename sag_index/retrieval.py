"""The 8-step SAG retrieval over the relational index and a vector/BM25 store.

1 NER (dictionary/BM25 fast, or DSPy) -> 2 entity recall (top_k 20, cosine >= 0.9) ->
3 dual-channel event recall (SQL entity->event join, and kNN k=20 plus BM25 k=20) ->
4 event details -> 5 multi-hop expansion over entity<->event (max_hops 1) -> 6 coarse rerank
by vector similarity (max 100 events) -> 7 selection of top_k (numeric formula fast, or DSPy)
-> 8 chunk backtrack (dedupe by chunk id). Every step records its candidates and timing.
Database reads borrow from a checked pool (``cubesage_core.db.pool``; shared with the caller's when given)
and are retried once on a fresh connection when the server dropped theirs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

import numpy as np
from psycopg_pool import ConnectionPool

from cubesage_core import db
from cubesage_core.embeddings import Embedder, get_embedder
from sag_index import repository
from sag_index._ner import fast_ner
from sag_index.backends.base import VectorStore
from sag_index.errors import NotIndexedError
from sag_index.llm_steps import Ner, Selector, llm_ner, llm_selector
from sag_index.pipeline import default_name_embedder
from sag_index.steps import STEPS
from sag_index.steps.base import Candidate, Details, RetrievalParams, RetrievedEvent, Run

__all__ = ["Candidate", "RetrievalParams", "RetrievalResult", "RetrievedEvent", "SagRetriever", "Step"]

T = TypeVar("T")


@dataclass
class Step:
    """One step's trace entry: its name, time, first 50 candidates and a note."""

    name: str
    ms: float
    candidates: list[dict[str, Any]]
    note: str = ""


@dataclass
class RetrievalResult:
    question: str
    events: list[RetrievedEvent]
    chunks: list[dict[str, Any]]
    steps: list[Step]
    modes: dict[str, str]
    entities: list[dict[str, Any]]

    @property
    def total_ms(self) -> float:
        return sum(s.ms for s in self.steps)

    def explain(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "modes": self.modes,
            "total_ms": round(self.total_ms, 2),
            "steps": [asdict(s) for s in self.steps],
            "events": [{k: v for k, v in asdict(e).items() if k != "meta"} for e in self.events],
        }


class SagRetriever:
    """Runs the 8 steps; ``ner`` and ``selector`` may be replaced by the DSPy implementations."""

    def __init__(
        self,
        url: str,
        store: VectorStore,
        embedder: Embedder | None = None,
        params: RetrievalParams | None = None,
        name_embedder: Embedder | None = None,
        ner: Ner | None = None,
        selector: Selector | None = None,
        connections: ConnectionPool | None = None,
    ) -> None:
        self.url = url
        self.store = store
        self.embedder = embedder or get_embedder()
        self.name_embedder = name_embedder if name_embedder is not None else default_name_embedder()
        self.params = params or RetrievalParams()
        self._own_pool = connections is None
        self._pool = connections if connections is not None else db.pool(url, max_size=2, name="sag-retrieval")
        self._dictionary: dict[str, str] | None = None
        self._ner = ner
        self._selector = selector

    def dictionary(self) -> dict[str, str]:
        if self._dictionary is None:
            self._dictionary = self.read(repository.entity_dictionary)
        return self._dictionary

    def read(self, query: Callable[..., T], *args: Any) -> T:
        """``query(conn, *args)`` on a pooled connection (retried once on a dropped one)."""
        return db.read(self._pool, lambda conn: query(conn, *args))

    def refresh(self) -> None:
        self._dictionary = None

    def close(self) -> None:
        if self._own_pool:
            self._pool.close()

    def retrieve(self, question: str, params: RetrievalParams | None = None) -> RetrievalResult:
        """Run :data:`sag_index.steps.STEPS` in order, each timed and traced."""
        dictionary = self.dictionary()
        if not dictionary:
            raise NotIndexedError("the SAG index is empty: run `cubesage sag index` first")
        run = Run(question, params or self.params, dictionary)
        steps: list[Step] = []
        clock = time.perf_counter()
        for step in STEPS:
            candidates, note = step.run(self, run)
            now = time.perf_counter()
            steps.append(Step(step.name, round((now - clock) * 1000, 3), candidates[:50], note))
            clock = now
        entity_info = [{"entity_id": k, "score": round(v, 4)} for k, v in run.entity_scores.items()]
        return RetrievalResult(question, run.events, run.chunks, steps, run.modes, entity_info)

    # -- the steps' services (``sag_index.steps.base.Services``) ------------------------------
    def embed_question(self, question: str) -> np.ndarray:
        return self.embedder.embed_one(question)

    def embed_names(self, names: list[str]) -> np.ndarray:
        return self.name_embedder.embed(names)

    def ner(self, question: str, dictionary: dict[str, str]) -> tuple[list[str], list[str], str]:
        """Step 1 by the configured NER, else the fast dictionary/BM25 one."""
        if self._ner is not None:
            return self._ner(question, dictionary)
        exact, free = fast_ner(question, dictionary)
        return exact, free, "fast"

    def select(
        self, question: str, pool: list[Candidate], details: Details, params: RetrievalParams
    ) -> tuple[list[str], str]:
        """Step 7 by the configured selector, else the fast formula."""
        if self._selector is not None:
            return self._selector(question, pool, details, params.top_k)
        return self.select_fast(pool, params.top_k, params), "fast"

    # -- scoring ----------------------------------------------------------------------------------
    def fast_score(self, c: Candidate, p: RetrievalParams | None = None) -> float:
        """Step 7's formula: relevance (BM25 + vector + question entities) + bridge bonus - hop penalty."""
        p = p or self.params
        return c.score + p.w_bridge * c.bridge - p.w_hop * c.hop

    def select_fast(self, pool: list[Candidate], top_k: int, p: RetrievalParams | None = None) -> list[str]:
        """Step 7 fast: the ``fast_score`` ranking (the candidates are left as they are)."""
        return [c.event_id for c in sorted(pool, key=lambda c: self.fast_score(c, p), reverse=True)[:top_k]]

    @classmethod
    def with_llm(cls, url: str, store: VectorStore, selection_tokens: int = 1500, **kwargs: Any) -> SagRetriever:
        """A retriever whose Step 1 and Step 7 run through DSPy when LLM mode is on (``cubesage_core.llm``:
        the active settings and question), the fast steps otherwise and on any LLM failure."""
        retriever = cls(url, store, ner=llm_ner(), **kwargs)
        retriever._selector = llm_selector(retriever.select_fast, selection_tokens, retriever.fast_score)
        return retriever
