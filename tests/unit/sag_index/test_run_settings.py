"""An indexing run's interpreter settings hold for the run and are back afterwards, also after a failure."""

from __future__ import annotations

import gc
import sys

import pytest

from sag_index._run_settings import GC_YOUNG_THRESHOLD, GIL_SWITCH_S, indexing_run


def test_settings_hold_during_the_run_and_are_restored() -> None:
    threshold, interval = gc.get_threshold(), sys.getswitchinterval()
    with indexing_run():
        assert gc.get_threshold() == (GC_YOUNG_THRESHOLD, *threshold[1:])
        assert sys.getswitchinterval() == pytest.approx(min(interval, GIL_SWITCH_S))
        assert gc.get_freeze_count() > 0  # what lived before the run is out of the collector's walks
    assert gc.get_threshold() == threshold
    assert sys.getswitchinterval() == interval
    assert gc.get_freeze_count() == 0


def test_settings_are_restored_after_a_failure() -> None:
    threshold = gc.get_threshold()
    with pytest.raises(RuntimeError), indexing_run():
        raise RuntimeError("batch failed")
    assert gc.get_threshold() == threshold
    assert gc.get_freeze_count() == 0
