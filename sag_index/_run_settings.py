"""Interpreter settings for the length of an indexing run: a short GIL switch interval, a quiet garbage collector.

An indexing run is Python threads (parser, writers) beside the sentence encoder's matrix products, which
release the GIL and need it back after each product; both settings shorten the time a returning thread waits.
Both are process-wide and restored when the run ends.
"""

from __future__ import annotations

import contextlib
import gc
import sys
from collections.abc import Iterator

GIL_SWITCH_S = 0.0005  # thread switch interval while a run's threads share the GIL
GC_YOUNG_THRESHOLD = 20_000  # allocations between young-generation collections during a run (CPython's default: 700)


@contextlib.contextmanager
def indexing_run() -> Iterator[None]:
    """``gil_handoff`` and ``quiet_gc`` for the run, then back."""
    with gil_handoff(), quiet_gc():
        yield


@contextlib.contextmanager
def gil_handoff() -> Iterator[None]:
    """The interpreter's thread switch interval at ``GIL_SWITCH_S`` for the run, then back.

    Every matrix product of the encoder and every database wait of a writer releases the GIL and needs it back;
    while another thread runs Python (the parser, a writer building rows), the default 5 ms interval leaves the
    returning thread waiting that long each time: measured on 2 cores, an encode of 500 passages beside one busy
    Python thread took 5.2 times as long as alone, 1.7 times with 0.5 ms (the CPU share alone would be 1.5).
    """
    before = sys.getswitchinterval()
    sys.setswitchinterval(min(before, GIL_SWITCH_S))
    try:
        yield
    finally:
        sys.setswitchinterval(before)


@contextlib.contextmanager
def quiet_gc() -> Iterator[None]:
    """The objects alive before the run frozen out of collection, and young collections ``GC_YOUNG_THRESHOLD``
    allocations apart, for the run; then both back.

    A run allocates millions of short-lived containers (token lists, rows, tuples); with the defaults the
    collector ran ~220 young, 20 middle and 2 full collections per 1,000 passages, the full ones walking the
    encoder's and the libraries' long-lived objects, 0.37-0.40 s with the GIL held; 0.12-0.13 s like this. The
    run makes no reference cycles of its own, so nothing waits longer to be freed than the run.
    """
    before, frozen_before = gc.get_threshold(), gc.get_freeze_count()
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
        if not frozen_before:  # a process that froze its own objects keeps them frozen
            gc.unfreeze()
