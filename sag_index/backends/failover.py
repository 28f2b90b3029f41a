"""A store that answers from Elasticsearch and, when Elasticsearch stops answering mid-run, from PostgreSQL.

``get_store`` wraps the Elasticsearch store in ``FailoverStore`` when ``es_fallback_postgres`` is set.
A failed read is retried on the PostgreSQL store (same relational data, its own vectors) and
Elasticsearch is skipped for ``cooldown_s``; ``fallback_reason`` says why while it is skipped.
Writes go to Elasticsearch only (indexing into a dead store must fail loudly, not split the index).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np

from sag_index.backends.base import IndexBatch, VectorField, VectorStore
from sag_index.errors import StoreUnavailable
from sag_index.models import Hit

T = TypeVar("T")
log = logging.getLogger(__name__)


def is_unreachable(err: BaseException) -> bool:
    """A connection-level failure of a store (not a query error, which another store would repeat)."""
    if isinstance(err, StoreUnavailable | ConnectionError | TimeoutError):
        return True
    names = {cls.__name__ for cls in type(err).__mro__}
    return bool(names & {"ConnectionError", "ConnectionTimeout", "TransportError"})


class FailoverStore(VectorStore):
    """Primary store with a lazily opened fallback for reads while the primary is unreachable."""

    def __init__(
        self, primary: VectorStore, make_fallback: Callable[[], VectorStore], cooldown_s: float = 30.0
    ) -> None:
        self.primary = primary
        self._make_fallback = make_fallback
        self._fallback: VectorStore | None = None
        self.cooldown_s = cooldown_s
        self._down_until = 0.0
        self.fallback_reason = primary.fallback_reason

    @property
    def backend(self) -> str:  # type: ignore[override]
        return self.primary.backend if time.monotonic() >= self._down_until else "postgres"

    def _read(self, call: Callable[[VectorStore], T]) -> T:
        if time.monotonic() >= self._down_until:
            try:
                result = call(self.primary)
                self.fallback_reason = None
                return result
            except Exception as err:
                if not is_unreachable(err):
                    raise
                self._down_until = time.monotonic() + self.cooldown_s
                self.fallback_reason = f"Elasticsearch unreachable, using PostgreSQL: {type(err).__name__}: {err}"
                log.warning("%s", self.fallback_reason)
        if self._fallback is None:
            self._fallback = self._make_fallback()
        return call(self._fallback)

    def ensure(self) -> None:
        self.primary.ensure()

    def reset(self) -> None:
        self.primary.reset()

    def upsert(self, batch: IndexBatch) -> None:
        self.primary.upsert(batch)

    def delete_events(self, event_ids: Sequence[str]) -> None:
        self.primary.delete_events(event_ids)

    def flush(self) -> None:
        self.primary.flush()

    def knn_events(
        self, vector: np.ndarray, k: int, field: VectorField = "content", kinds: Sequence[str] | None = None
    ) -> list[Hit]:
        return self._read(lambda s: s.knn_events(vector, k, field, kinds))

    def text_events(
        self, tokens: Sequence[str], k: int, kinds: Sequence[str] | None = None, ids: Sequence[str] | None = None
    ) -> list[Hit]:
        return self._read(lambda s: s.text_events(tokens, k, kinds, ids))

    def score_events(self, vector: np.ndarray, ids: Sequence[str], field: VectorField = "content") -> dict[str, float]:
        return self._read(lambda s: s.score_events(vector, ids, field))

    def knn_entities(
        self, vector: np.ndarray, k: int, threshold: float = 0.0, tokens: Sequence[str] | None = None
    ) -> list[Hit]:
        return self._read(lambda s: s.knn_entities(vector, k, threshold, tokens))

    def text_entities(self, tokens: Sequence[str], k: int) -> list[Hit]:
        return self._read(lambda s: s.text_entities(tokens, k))

    def knn_entities_many(
        self,
        vectors: Sequence[np.ndarray],
        k: int,
        threshold: float = 0.0,
        tokens: Sequence[Sequence[str]] | None = None,
    ) -> list[list[Hit]]:
        return self._read(lambda s: s.knn_entities_many(vectors, k, threshold, tokens))

    def knn_links(self, vector: np.ndarray, k: int) -> list[tuple[str, str, float]]:
        return self._read(lambda s: s.knn_links(vector, k))

    def count(self) -> dict[str, int]:
        return self._read(lambda s: s.count())

    def close(self) -> None:
        self.primary.close()
        if self._fallback is not None:
            self._fallback.close()
