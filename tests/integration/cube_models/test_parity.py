"""Built-in compiler vs the real Cube server on the demo warehouse: same rows for every parity query."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cube_models.backends import BuiltinBackend, CubeBackend
from cube_models.parity import ParityCase, compare_rows, order_keys
from demo.parity_cases import PARITY_CASES

pytestmark = pytest.mark.integration


def test_parity_suite_is_broad() -> None:
    assert len(PARITY_CASES) >= 60
    assert len({c.name for c in PARITY_CASES}) == len(PARITY_CASES)


@pytest.mark.parametrize("case", PARITY_CASES, ids=[c.name for c in PARITY_CASES])
def test_builtin_matches_cube(case: ParityCase, builtin: BuiltinBackend, cube_backend: CubeBackend) -> None:
    # Cube 0.33 resolves relative date ranges with the real clock: give the builtin compiler the same day.
    today = datetime.now(UTC).date() if case.real_clock else None
    ours = builtin.load(case.query, today=today)
    theirs = cube_backend.load(case.query)
    problems = compare_rows(ours.rows, theirs.rows, order_keys(case.query))
    assert not problems, f"{case.name}: {problems}\nSQL: {ours.sql}\nparams: {ours.params}"
    assert ours.total == theirs.total
    assert ours.backend == "builtin" and theirs.backend == "cube"


def test_comparison_detects_a_wrong_number(builtin: BuiltinBackend, cube_backend: CubeBackend) -> None:
    query = {"measures": ["orders.count"], "dimensions": ["orders.status"]}
    ours = builtin.load(query).rows
    theirs = cube_backend.load(query).rows
    ours[0] = {**ours[0], "orders.count": ours[0]["orders.count"] + 1}
    assert compare_rows(ours, theirs)
