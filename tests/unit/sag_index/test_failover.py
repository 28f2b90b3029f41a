"""FailoverStore: reads move to the fallback store when the primary stops answering, writes never do."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from sag_index.backends.base import IndexBatch, VectorStore
from sag_index.backends.failover import FailoverStore
from sag_index.models import Hit


class Down(ConnectionError):
    pass


class Recorder(VectorStore):
    def __init__(self, backend: str) -> None:
        self.backend = backend
        self.down = False
        self.calls: list[str] = []

    def _hit(self, name: str) -> list[Any]:
        if self.down:
            raise Down("connection refused")
        self.calls.append(name)
        return [name]

    def ensure(self) -> None: ...
    def reset(self) -> None: ...

    def upsert(self, batch: IndexBatch) -> None:
        self._hit("upsert")

    def delete_events(self, event_ids: Sequence[str]) -> None:
        self._hit("delete_events")

    def knn_events(
        self, vector: np.ndarray, k: int, field: str = "content", kinds: Sequence[str] | None = None
    ) -> list[Hit]:
        return self._hit("knn_events")

    def text_events(
        self, tokens: Sequence[str], k: int, kinds: Sequence[str] | None = None, ids: Sequence[str] | None = None
    ) -> list[Hit]:
        return self._hit("text_events")

    def score_events(self, vector: np.ndarray, ids: Sequence[str], field: str = "content") -> dict[str, float]:
        return {"e": 1.0} if self._hit("score_events") else {}

    def knn_entities(
        self, vector: np.ndarray, k: int, threshold: float = 0.0, tokens: Sequence[str] | None = None
    ) -> list[Hit]:
        return self._hit("knn_entities")

    def text_entities(self, tokens: Sequence[str], k: int) -> list[Hit]:
        return self._hit("text_entities")

    def knn_links(self, vector: np.ndarray, k: int) -> list[tuple[str, str, float]]:
        return self._hit("knn_links")

    def count(self) -> dict[str, int]:
        return {"events": len(self._hit("count"))}


def test_reads_fail_over_and_come_back_after_the_cooldown() -> None:
    es, pg = Recorder("elasticsearch"), Recorder("postgres")
    store = FailoverStore(es, lambda: pg, cooldown_s=0.0)
    v = np.zeros(4, dtype=np.float32)
    assert store.knn_events(v, 5) == ["knn_events"] and store.backend == "elasticsearch"
    es.down = True
    assert store.text_entities(["li"], 5) == ["text_entities"]
    assert pg.calls == ["text_entities"] and "unreachable" in (store.fallback_reason or "")
    es.down = False
    assert store.knn_links(v, 3) == ["knn_links"] and es.calls[-1] == "knn_links"
    assert store.fallback_reason is None


def test_cooldown_skips_the_dead_primary_and_writes_never_fail_over() -> None:
    es, pg = Recorder("elasticsearch"), Recorder("postgres")
    store = FailoverStore(es, lambda: pg, cooldown_s=60.0)
    es.down = True
    store.knn_entities_many([np.zeros(4)], 5)
    assert store.backend == "postgres"
    es.down = False
    store.count()
    assert es.calls == [] and pg.calls[-1] == "count"  # still cooling down
    es.down = True
    with pytest.raises(Down):
        store.upsert(IndexBatch(events=[], entities=[], links=[]))


def test_query_errors_are_not_hidden_by_the_fallback() -> None:
    class Broken(Recorder):
        def knn_events(self, *args: Any, **kwargs: Any) -> list[Hit]:
            raise ValueError("bad query")

    store = FailoverStore(Broken("elasticsearch"), lambda: Recorder("postgres"))
    with pytest.raises(ValueError, match="bad query"):
        store.knn_events(np.zeros(4), 5)
