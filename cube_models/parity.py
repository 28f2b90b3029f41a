"""Parity of the built-in compiler with Cube: the case type and the row comparison used by tests and the bench.

A case is a name, a Cube query and whether it anchors relative date ranges on the real clock (Cube 0.33
resolves "last year" with its own clock, so those cases give the built-in compiler the same ``today``); the
cases over the demo model are ``demo.parity_cases.PARITY_CASES``. Row comparison is order-insensitive, plus
an order check on the ordered keys.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ParityCase:
    name: str
    query: dict[str, Any]
    real_clock: bool = False


def _close(a: Any, b: Any, rel: float = 1e-9) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return bool(a == b)
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(float(a), float(b), rel_tol=rel, abs_tol=1e-9)
    return bool(a == b)


def _canon(row: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(
        sorted(
            (
                k,
                round(float(v), 6)
                if isinstance(v, int | float) and not isinstance(v, bool)
                else (str(v) if v is not None else ""),
            )
            for k, v in row.items()
        )
    )


def compare_rows(
    builtin: list[dict[str, Any]], cube: list[dict[str, Any]], order_keys: list[str] | None = None, rel: float = 1e-9
) -> list[str]:
    """Differences between two row lists (empty when they match): same multiset of rows (numbers within
    ``rel``), and, when ``order_keys`` is given, the same sequence of values of those keys."""
    problems: list[str] = []
    if len(builtin) != len(cube):
        problems.append(f"row count differs: builtin {len(builtin)} vs cube {len(cube)}")
    left, right = sorted(builtin, key=_canon), sorted(cube, key=_canon)
    for i, (a, b) in enumerate(zip(left, right, strict=False)):
        if set(a) != set(b):
            problems.append(f"row {i}: keys differ: {sorted(a)} vs {sorted(b)}")
            break
        bad = [k for k in a if not _close(a[k], b[k], rel)]
        if bad:
            problems.append(f"row {i}: {', '.join(f'{k}: {a[k]!r} != {b[k]!r}' for k in bad)}")
            break
    if order_keys and not problems:
        seq_a = [tuple(r.get(k) for k in order_keys) for r in builtin]
        seq_b = [tuple(r.get(k) for k in order_keys) for r in cube]
        if not all(
            all(_close(x, y, rel) for x, y in zip(ra, rb, strict=False)) for ra, rb in zip(seq_a, seq_b, strict=False)
        ):
            problems.append("row order differs")
    return problems


def order_keys(query: dict[str, Any]) -> list[str]:
    """The row keys whose sequence Cube's order fixes (explicit order, or Cube's default order)."""
    order = query.get("order")
    if order:
        items = list(order.items()) if isinstance(order, dict) else [tuple(o) for o in order]
        return [k for k, _ in items]
    dims = [d for d in query.get("dimensions", []) if d.count(".") == 1]
    tds = [f"{t['dimension']}.{t['granularity']}" for t in query.get("timeDimensions", []) if t.get("granularity")]
    tds += [d for d in query.get("dimensions", []) if d.count(".") == 2]
    if tds:
        return tds[:1]
    if query.get("measures") and dims:
        return [query["measures"][0]]
    return dims[:1]
