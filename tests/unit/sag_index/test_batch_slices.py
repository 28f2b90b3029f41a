"""How an indexing run is cut into batches: full batches, the last of several cut small (written after the
encoder has finished, it is the part of a run nothing overlaps)."""

from __future__ import annotations

import pytest

from sag_index.pipeline import TAIL_PARTS, batch_slices


@pytest.mark.parametrize(("total", "size"), [(994, 256), (400, 20), (513, 256), (257, 256), (7, 2)])
def test_several_batches_cover_the_run_in_order_with_a_small_tail(total: int, size: int) -> None:
    batches = batch_slices(list(range(total)), size)
    assert [x for batch in batches for x in batch] == list(range(total))
    full = (total - 1) // size  # the batches before the last
    assert [len(b) for b in batches[:full]] == [size] * full
    tail = total - full * size
    assert 1 <= len(batches) - full <= TAIL_PARTS
    assert max(len(b) for b in batches[full:]) == -(-tail // TAIL_PARTS)


@pytest.mark.parametrize("total", [0, 1, 100, 256])
def test_a_run_of_one_batch_is_not_cut(total: int) -> None:
    assert [len(b) for b in batch_slices(list(range(total)), 256)] == ([total] if total else [])
