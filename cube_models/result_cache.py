"""Result cache of the built-in backend, kept the way Cube keeps its in-memory cache.

A compiled query's records are reused while the warehouse's refresh key
(:mod:`cubesage_core.refresh_key`) is unchanged. The key is read at most once every ``refresh_s``
seconds; a changed key empties the cache, so an answer is at most ``refresh_s`` seconds (plus
PostgreSQL's statistics flush delay, about a second) behind the warehouse. ``refresh_s = 0`` turns
the cache off. Large results (more than ``max_rows``) are not kept.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from cubesage_core.lru import Lru
from cubesage_core.refresh_key import RefreshKey, Schemas


@dataclass(frozen=True)
class CachedResult:
    records: list[tuple[Any, ...]]
    total: int | None
    version: Any  # the refresh key the query ran under


class ResultCache:
    """Query results by compiled SQL + parameters, valid while the warehouse refresh key stays the same."""

    def __init__(
        self,
        schema: Schemas,
        refresh_s: float,
        max_entries: int = 512,
        max_rows: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_rows = max_rows
        self.key = RefreshKey(schema, refresh_s, clock)
        self._entries: Lru[CachedResult] = Lru(max_entries)
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.key.every_s > 0 and self._entries.max_entries > 0

    @property
    def version(self) -> Any:
        """The refresh key last read: pass it to :meth:`put` with results read after it."""
        return self.key.value

    def due(self) -> bool:
        """True when the refresh key must be read again before the cache may answer."""
        return self.enabled and self.key.due()

    def refresh(self, fingerprint: tuple[Any, ...]) -> None:
        """Record the warehouse fingerprint just read; a different one empties the cache."""
        with self._lock:
            if self.key.update(fingerprint):
                self._entries.clear()

    def get(self, query_key: Hashable) -> CachedResult | None:
        if not self.enabled or self.due():
            return None
        hit = self._entries.get(query_key)
        return hit if hit is not None and hit.version == self.key.value else None

    def put(self, query_key: Hashable, records: list[tuple[Any, ...]], total: int | None, version: Any) -> None:
        """Keep a result read under refresh key ``version`` (dropped if the key has changed since)."""
        if self.enabled and len(records) <= self.max_rows and version == self.key.value and not self.due():
            self._entries.put(query_key, CachedResult(records, total, version))

    def clear(self) -> None:
        """Forget every result (a writer in this process changed the warehouse)."""
        with self._lock:
            self._entries.clear()
            self.key.expire()

    def __len__(self) -> int:
        return len(self._entries)
