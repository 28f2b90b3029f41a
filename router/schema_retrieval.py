"""A question's schema retrieval: the main question and its sub-queries through fourengine, fused (RAG-Fusion).

:class:`SchemaRetrieval` runs the sub-queries concurrently with the main question and fuses their rankings;
:class:`WikiPassages` is the SAG wiki search as fourengine's passage source (corrective retrieval).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from cubesage_core.embeddings import Embedder
from cubesage_core.llm import fast_only, wants_llm
from cubesage_core.settings import Settings
from fourengine.fusion import fuse
from fourengine.passages import Passage
from fourengine.retrieve import Retriever
from router.complexity import estimate_complexity
from router.decompose import SubQuery, rrf_fuse
from router.understanding.types import Understanding
from sag_index.errors import NotIndexedError
from sag_index.recall import SagRecall


class SchemaRetrieval:
    """``(understanding, sub_queries) -> (retrieval, fused ranking)``; ``retrieval`` holds the main question's
    ``result``, the sub-queries' ``by_sub`` and the fused ``context`` that generation and provenance see."""

    def __init__(
        self, retriever: Retriever, embedder: Embedder, settings: Settings, workers: ThreadPoolExecutor
    ) -> None:
        self.retriever, self.embedder, self.settings, self.workers = retriever, embedder, settings, workers

    def __call__(
        self, understanding: Understanding, sub_queries: list[SubQuery]
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        retriever = self.retriever
        subs = [s for s in sub_queries if _text(s) != understanding.normalized] if len(sub_queries) > 1 else []
        # one batch for all sub-queries
        vectors = self.embedder.embed([_text(s) for s in subs]) if subs else np.zeros((0, 0), dtype=np.float32)
        pending = {
            _text(sub): self.workers.submit(
                retriever.retrieve_sync, _text(sub), getattr(sub, "search_terms", None) or None, embedding=vec
            )
            for sub, vec in zip(subs, vectors, strict=True)
        }  # sub-queries run concurrently with the main
        main = retriever.retrieve_sync(
            understanding.normalized,
            understanding.search_terms,
            complexity=estimate_complexity(understanding, sub_queries),
            grade_with_llm=self.settings.llm_crag_grade and wants_llm(),
        )
        by_sub = {text: future.result() for text, future in pending.items()}
        fused = rrf_fuse([[a.asset.asset_id for a in r.assets] for r in [main, *by_sub.values()]])
        context = fuse(main, list(by_sub.values()), retriever.settings)  # what generation and provenance see
        return (
            {"result": main, "by_sub": by_sub, "context": context},
            [{"id": i, "score": round(s, 5)} for i, s in fused],
        )


class WikiPassages:
    """The SAG wiki search as fourengine's passage source (corrective retrieval of a low CRAG grade). Always
    the fast SAG steps: LLM mode's NER and selection serve detail recall, not the schema retrieval before the
    LLM grades it (they would add two sequential calls to every low-graded question)."""

    def __init__(self, sag: SagRecall) -> None:
        self.sag = sag

    def passages(self, question: str, limit: int) -> list[Passage]:
        try:
            with fast_only():
                events = self.sag.search(question).events
        except NotIndexedError:  # a fresh database before `sag index`: no wiki passages yet
            return []
        return [
            Passage(str(table), float(e.score), e.title, e.event_id, e.content)
            for e in events[:limit]
            for table in e.meta.get("tables", [])
        ]


def _text(sub: Any) -> str:
    return sub if isinstance(sub, str) else str(getattr(sub, "text", sub))
