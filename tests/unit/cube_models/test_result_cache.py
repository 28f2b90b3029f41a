"""The built-in backend's result cache: entries live while the warehouse refresh key stays the same."""

from __future__ import annotations

from cube_models.result_cache import ResultCache


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _cache(refresh_s: float = 10.0, **kw: int) -> tuple[ResultCache, Clock]:
    clock = Clock()
    return ResultCache("warehouse", refresh_s, clock=clock, **kw), clock


def test_nothing_is_served_before_the_key_is_read() -> None:
    cache, _ = _cache()
    assert cache.due()
    cache.put("q", [(1,)], None, cache.version)
    assert cache.get("q") is None


def test_results_are_served_until_the_key_changes() -> None:
    cache, clock = _cache()
    cache.refresh((1, 1, 7))
    cache.put("q", [(1,), (2,)], 2, cache.version)
    hit = cache.get("q")
    assert hit is not None and hit.records == [(1,), (2,)] and hit.total == 2
    clock.now += 10
    assert cache.get("q") is None  # the key must be read again first
    cache.refresh((1, 1, 7))
    assert cache.get("q") is not None  # same warehouse: still valid
    clock.now += 10
    cache.refresh((5, 1, 7))
    assert cache.get("q") is None and len(cache) == 0


def test_a_result_read_under_an_older_key_is_not_kept() -> None:
    cache, clock = _cache()
    cache.refresh((1, 1, 7))
    started_under = cache.version
    clock.now += 10
    cache.refresh((2, 1, 7))  # the warehouse changed while the query ran
    cache.put("q", [(1,)], None, started_under)
    assert cache.get("q") is None


def test_off_large_results_and_clear() -> None:
    off, _ = _cache(refresh_s=0)
    off.refresh((1,))
    off.put("q", [(1,)], None, off.version)
    assert not off.enabled and off.get("q") is None
    small, _ = _cache(max_rows=2)
    small.refresh((1,))
    small.put("big", [(1,), (2,), (3,)], None, small.version)
    small.put("q", [(1,)], None, small.version)
    assert small.get("big") is None and small.get("q") is not None
    small.clear()
    assert small.due() and small.get("q") is None
