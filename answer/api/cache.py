"""Answer cache: the same question (same mode, same "today", no conversation context) within a TTL
gets the stored answer under a new query_id instead of running the pipeline again.

Dashboards and chat users repeat questions; the warehouse answer does not change within minutes.
Any ingest or learned feedback clears the cache (the knowledge behind answers changed).
``Settings.api_answer_cache_ttl_s = 0`` turns it off.
"""

from __future__ import annotations

import threading
import time
import unicodedata
import uuid
from datetime import date
from typing import Any

from cubesage_core.lru import Lru

Key = tuple[str, str, str]


def cache_key(question: str, mode: str | None, today: date | None) -> Key:
    normalized = " ".join(unicodedata.normalize("NFKC", question).casefold().split())
    return normalized, mode or "", today.isoformat() if today else ""


class AnswerCache:
    """LRU of (raw answer, plain answer) by question key, entries valid for ``ttl_s``."""

    def __init__(self, ttl_s: float, max_entries: int) -> None:
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self._entries: Lru[tuple[float, Any, dict[str, Any]]] = Lru(max_entries)
        self._lock = threading.Lock()  # guards the counters
        self.hits = 0
        self.misses = 0

    @property
    def enabled(self) -> bool:
        return self.ttl_s > 0 and self.max_entries > 0

    def get(self, key: Key) -> tuple[Any, dict[str, Any]] | None:
        """A copy of the cached answer with a fresh query_id, or None."""
        if not self.enabled:
            return None
        entry = self._entries.get(key)
        fresh = entry is not None and time.monotonic() - entry[0] <= self.ttl_s
        with self._lock:
            if fresh:
                self.hits += 1
            else:
                self.misses += 1
        if entry is None or not fresh:
            self._entries.pop(key)
            return None
        stored_at, raw, plain = entry
        answer = dict(plain)  # shallow: the stored parts are never mutated
        answer["provenance"] = {
            **(answer.get("provenance") or {}),
            "answer_cache": {
                "hit": True,
                "of_query_id": plain.get("query_id"),
                "age_s": round(time.monotonic() - stored_at, 1),
            },
        }
        answer["query_id"] = str(uuid.uuid4())
        return raw, answer

    def put(self, key: Key, raw: Any, plain: dict[str, Any]) -> None:
        if self.enabled and not _transient_failure(plain):
            self._entries.put(key, (time.monotonic(), raw, plain))

    def clear(self) -> None:
        self._entries.clear()


TRANSIENT_MARKERS = ("Execution", "Unavailable", "Timeout", "Connection", "Operational")


def _transient_failure(answer: dict[str, Any]) -> bool:
    """A refusal caused by a failing service (may succeed on retry: not cached); refusals of the question
    itself (unsupported, ambiguous, no such entity) are as stable as answers."""
    error = (answer.get("provenance") or {}).get("error")
    if not error:
        return False
    kind = str(error.get("type", "")) if isinstance(error, dict) else str(error)
    return not kind or any(marker in kind for marker in TRANSIENT_MARKERS)
