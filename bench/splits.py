"""Fixed dev/test halves of a benchmark's question set: tune on dev, report test.

The question indices are shuffled with a seed written here, so the halves are the same on every run
(for the same question set); dev gets the first half (the extra question of an odd count), test the rest.
"""

from __future__ import annotations

import random

SPLIT_SEED = 20261201
SPLITS = ("dev", "test")


def split_indices(n: int, seed: int = SPLIT_SEED) -> dict[str, list[int]]:
    """``{"dev": [...], "test": [...]}``: sorted question indices of each half."""
    order = list(range(n))
    random.Random(seed).shuffle(order)
    half = (n + 1) // 2
    return {"dev": sorted(order[:half]), "test": sorted(order[half:])}
