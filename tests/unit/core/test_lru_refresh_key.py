"""The bounded LRU map and the refresh-key bookkeeping behind the caches."""

from __future__ import annotations

from cubesage_core.lru import Lru
from cubesage_core.refresh_key import RefreshKey


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_lru_evicts_the_least_recently_used() -> None:
    lru: Lru[int] = Lru(2)
    lru.put("a", 1)
    lru.put("b", 2)
    assert lru.get("a") == 1  # "a" is now the most recent
    lru.put("c", 3)
    assert lru.get("b") is None and lru.get("a") == 1 and lru.get("c") == 3 and len(lru) == 2


def test_lru_of_size_zero_keeps_nothing() -> None:
    lru: Lru[int] = Lru(0)
    lru.put("a", 1)
    assert lru.get("a") is None and len(lru) == 0


def test_refresh_key_is_due_every_interval_and_reports_changes() -> None:
    clock = Clock()
    key = RefreshKey("warehouse", 10.0, clock)
    assert key.due()
    assert key.update((1, 2, 3)) is True
    assert not key.due()
    clock.now += 9.9
    assert not key.due()
    clock.now += 0.1
    assert key.due()
    assert key.update((1, 2, 3)) is False and not key.due()
    key.expire()
    assert key.due()
    assert key.update((2, 2, 3)) is True
