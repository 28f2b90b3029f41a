"""Conversation memory: the previous turn of each session, kept in memory with a TTL and a size cap.

A follow-up ("and by channel?", "只看北区") is answered with the previous turn passed to
the service, which reuses its metrics, filters and time range.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Any


class SessionMemory:
    """LRU map session_id -> previous answer; entries expire ``ttl_s`` after their last write."""

    def __init__(self, ttl_s: float = 1800.0, max_sessions: int = 10_000) -> None:
        self.ttl_s = ttl_s
        self.max_sessions = max_sessions
        self._turns: OrderedDict[str, tuple[float, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, session_id: str | None) -> Any | None:
        if not session_id:
            return None
        with self._lock:
            entry = self._turns.get(session_id)
            if entry is None:
                return None
            stored_at, turn = entry
            if time.monotonic() - stored_at > self.ttl_s:
                del self._turns[session_id]
                return None
            self._turns.move_to_end(session_id)
            return turn

    def put(self, session_id: str | None, turn: Any) -> None:
        if not session_id:
            return
        with self._lock:
            self._turns[session_id] = (time.monotonic(), turn)
            self._turns.move_to_end(session_id)
            while len(self._turns) > self.max_sessions:
                self._turns.popitem(last=False)

    def __len__(self) -> int:
        return len(self._turns)
