"""Fast-mode corrective fix of a rejected or failed query: use suggestions, drop offending members.

- a bound metric missing from the measures is added;
- a measure neither bound nor retrieved is dropped (replaced by a bound one if none would remain);
- an unknown member is replaced by the validator's suggestion when that exists in the model, else dropped;
- an execution error naming members drops those members; naming none, it drops the dimensions of cubes not
  reachable from the measures' cubes;
- a member that picks the rows (a filter on it, a period of it) is never dropped, only replaced: dropping it
  would answer for more rows than asked.
Returns None when nothing could be changed (the caller gives up with the problems).
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from cube_models.model import SemanticModel
from router.aggregate.members import measure_cubes, reachable_cubes
from router.aggregate.types import Problem

_MEMBER = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*)\b")


def _replace(query: dict[str, Any], old: str, new: str | None) -> None:
    """Replace (or drop, when ``new`` is None) member ``old`` everywhere in ``query``."""
    for key in ("measures", "dimensions", "segments"):
        if key in query:
            items = [new if m == old else m for m in query[key]]
            query[key] = [m for m in dict.fromkeys(items) if m]
    if "timeDimensions" in query:
        query["timeDimensions"] = [t for t in query["timeDimensions"] if t.get("dimension") != old or new]
        for t in query["timeDimensions"]:
            if t.get("dimension") == old:
                t["dimension"] = new
    if "filters" in query:
        kept = []
        for f in query["filters"]:
            if f.get("member", f.get("dimension")) == old:
                if new:
                    kept.append({**f, "member": new})
            else:
                kept.append(f)
        query["filters"] = kept
    if "order" in query:
        order = query["order"]
        pairs = list(order.items()) if isinstance(order, dict) else [tuple(o) for o in order]
        query["order"] = [[new if m == old else m, d] for m, d in pairs if m != old or new]
    for key in [k for k, v in query.items() if v == [] and k != "measures"]:
        del query[key]


def fix(
    query: dict[str, Any], problems: list[Problem], model: SemanticModel, bound: list[str]
) -> dict[str, Any] | None:
    fixed = copy.deepcopy(query)
    for problem in problems:
        member = problem.member
        if problem.code == "unused_binding" and member and model.find_member(member) is not None:
            fixed.setdefault("measures", [])
            if member not in fixed["measures"]:
                fixed["measures"].append(member)
        elif problem.code in ("unbound_measure", "not_retrieved") and member:
            others = [m for m in fixed.get("measures", []) if m != member]
            _replace(fixed, member, None if others or not bound else bound[0])
        elif member and problem.code != "unknown_binding":
            suggestion = problem.suggestion if problem.suggestion and model.find_member(problem.suggestion) else None
            if suggestion or (
                not _restricts(fixed, member)
                and (member not in fixed.get("measures", []) or len(fixed.get("measures", [])) > 1)
            ):
                _replace(fixed, member, suggestion)
        elif problem.code == "execution":
            named = [m for m in _MEMBER.findall(problem.message) if m in json.dumps(fixed)]
            named = [m for m in named if m not in fixed.get("measures", []) and not _restricts(fixed, m)]
            for name in named:
                _replace(fixed, name, None)
            if not named:
                _drop_unreachable(fixed, model)
    if fixed == query or not fixed.get("measures"):
        return None
    return fixed


def _restricts(query: dict[str, Any], member: str) -> bool:
    """``member`` picks the rows (a filter on it, a period of it): dropping it would answer for more rows
    than asked ("before 1900" read as all time), so it is never dropped, only replaced by a suggestion."""
    filtered = {f.get("member", f.get("dimension")) for f in query.get("filters") or []}
    dated = {t.get("dimension") for t in query.get("timeDimensions") or [] if t.get("dateRange")}
    return member in filtered or member in dated


def _drop_unreachable(query: dict[str, Any], model: SemanticModel) -> None:
    reach: set[str] = set()
    for cube in measure_cubes(query.get("measures", [])):
        if cube in model.cubes:
            reach |= set(reachable_cubes(model, cube))
    for dimension in list(query.get("dimensions", [])):
        if dimension.split(".", 1)[0] not in reach:
            _replace(query, dimension, None)
