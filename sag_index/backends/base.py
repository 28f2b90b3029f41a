"""The vector/BM25 store contract: three indices (event, entity, event-entity) behind one interface.

Backends: ``postgres`` (pgvector + BM25 postings in schema ``sag``) and ``elasticsearch``
(dense_vector kNN + BM25 on whitespace-analysed token fields). Both receive the same
pre-tokenised text, so their BM25 rankings agree; vector scores are cosine similarities.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from sag_index.models import Hit

VectorField = str  # "title" | "content" (title + content)


@dataclass
class EventDoc:
    """An event as the store holds it; a table row's has no vectors (rows are found by names and BM25)."""

    event_id: str
    chunk_id: str
    kind: str
    title: str
    tokens: list[str]
    title_vec: np.ndarray | None
    content_vec: np.ndarray | None


@dataclass
class EntityDoc:
    entity_id: str
    name: str
    normalized: str
    type: str
    tokens: list[str]
    name_vec: np.ndarray | None


@dataclass
class LinkDoc:
    event_id: str
    entity_id: str
    description: str
    desc_vec: np.ndarray


@dataclass
class IndexBatch:
    events: list[EventDoc] = field(default_factory=list)
    entities: list[EntityDoc] = field(default_factory=list)
    links: list[LinkDoc] = field(default_factory=list)


class VectorStore(ABC):
    """Fuzzy recall and scoring: kNN and BM25 over events, entities and event-entity links."""

    backend: str = "base"
    #: set when this store stands in for an unreachable one (e.g. "elasticsearch unreachable: ...")
    fallback_reason: str | None = None

    @property
    def key(self) -> str:
        """Identity of the place vectors are written to (recorded per chunk as ``indexed_in``)."""
        return self.backend

    @abstractmethod
    def ensure(self) -> None:
        """Create the indices/tables if absent (idempotent)."""

    @abstractmethod
    def reset(self) -> None:
        """Delete every document of this store's namespace."""

    @abstractmethod
    def upsert(self, batch: IndexBatch) -> None:
        """Insert or replace documents by id (idempotent)."""

    @abstractmethod
    def delete_events(self, event_ids: Sequence[str]) -> None:
        """Remove events (and their event-entity link vectors); entities stay (they may be shared)."""

    @abstractmethod
    def knn_events(
        self, vector: np.ndarray, k: int, field: VectorField = "content", kinds: Sequence[str] | None = None
    ) -> list[Hit]:
        """Top-k events by cosine similarity of ``field`` to ``vector``."""

    @abstractmethod
    def text_events(
        self, tokens: Sequence[str], k: int, kinds: Sequence[str] | None = None, ids: Sequence[str] | None = None
    ) -> list[Hit]:
        """Top-k events by BM25 over title + chunk text (optionally restricted to ``ids``)."""

    @abstractmethod
    def score_events(self, vector: np.ndarray, ids: Sequence[str], field: VectorField = "content") -> dict[str, float]:
        """Cosine similarity of the given events to ``vector`` (coarse rerank)."""

    @abstractmethod
    def knn_entities(
        self, vector: np.ndarray, k: int, threshold: float = 0.0, tokens: Sequence[str] | None = None
    ) -> list[Hit]:
        """Top-k entities by name-vector cosine, at least ``threshold``.

        ``tokens`` (the mention's tokens) is a blocking hint: a backend without an ANN index may
        rank only entities sharing a token with the mention.
        """

    @abstractmethod
    def text_entities(self, tokens: Sequence[str], k: int) -> list[Hit]:
        """Top-k entities by BM25 over their name tokens."""

    def knn_entities_many(
        self,
        vectors: Sequence[np.ndarray],
        k: int,
        threshold: float = 0.0,
        tokens: Sequence[Sequence[str]] | None = None,
    ) -> list[list[Hit]]:
        """``knn_entities`` for several mentions (backends may batch the round trips)."""
        return [self.knn_entities(v, k, threshold, tokens[i] if tokens else None) for i, v in enumerate(vectors)]

    def recall_events(
        self,
        vector: np.ndarray,
        tokens: Sequence[str],
        k: int,
        dense_kinds: Sequence[str] | None,
        kinds: Sequence[str] | None,
    ) -> tuple[list[Hit], list[Hit]]:
        """Step 3 channel 2 in one call: (kNN hits over ``dense_kinds``, BM25 hits over ``kinds``)."""
        knn = self.knn_events(vector, k, "content", dense_kinds) if dense_kinds else []
        return knn, self.text_events(tokens, k, kinds)

    def hybrid_scores(
        self, vector: np.ndarray, dense_ids: Sequence[str], tokens: Sequence[str], ids: Sequence[str]
    ) -> tuple[dict[str, float], list[Hit]]:
        """Cosine of ``dense_ids`` and BM25 of ``ids`` (backends may answer both in one round trip)."""
        return self.score_events(vector, dense_ids), self.text_events(tokens, len(ids), ids=ids)

    def flush(self) -> None:  # noqa: B027 - optional hook
        """Make everything upserted so far searchable (called at the end of an indexing run)."""

    @abstractmethod
    def knn_links(self, vector: np.ndarray, k: int) -> list[tuple[str, str, float]]:
        """Top-k (event_id, entity_id, cosine) by event-entity description vector."""

    @abstractmethod
    def count(self) -> dict[str, int]:
        """Documents per index: {"events": n, "entities": n, "links": n}."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""
