"""Cube query JSON as a typed object: ``CubeQuery.parse(dict | str)`` checks its shape like Cube's API does.

Shape errors raise ``QueryError`` (malformed JSON, unknown keys, bad member names, bad operators);
whether members exist in a model is ``cube_models.validate``'s and the compiler's job.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from cube_models.errors import QueryError
from cube_models.model import GRANULARITIES

MEMBER_RE = re.compile(r"^[a-zA-Z0-9_]+\.[a-zA-Z0-9_]+$")
DIMENSION_WITH_GRANULARITY_RE = re.compile(r"^([a-zA-Z0-9_]+\.[a-zA-Z0-9_]+)\.([a-z]+)$")
OPERATORS = (
    "equals",
    "notEquals",
    "contains",
    "notContains",
    "startsWith",
    "notStartsWith",
    "endsWith",
    "notEndsWith",
    "gt",
    "gte",
    "lt",
    "lte",
    "set",
    "notSet",
    "inDateRange",
    "notInDateRange",
    "onTheDate",
    "beforeDate",
    "beforeOrOnDate",
    "afterDate",
    "afterOrOnDate",
)
DATE_OPERATORS = (
    "inDateRange",
    "notInDateRange",
    "onTheDate",
    "beforeDate",
    "beforeOrOnDate",
    "afterDate",
    "afterOrOnDate",
)
_KEYS = {
    "measures",
    "dimensions",
    "filters",
    "timeDimensions",
    "segments",
    "order",
    "limit",
    "offset",
    "total",
    "timezone",
    "renewQuery",
    "responseFormat",
    "ungrouped",
}
MAX_MEMBERS = 200
MAX_FILTER_VALUES = 1000
MAX_FILTER_DEPTH = 10


@dataclass(frozen=True)
class Filter:
    member: str
    operator: str
    values: tuple[str | None, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"member": self.member, "operator": self.operator}
        if self.values or self.operator not in ("set", "notSet"):
            out["values"] = list(self.values)
        return out


@dataclass(frozen=True)
class FilterGroup:
    op: str  # "and" | "or"
    items: tuple[Filter | FilterGroup, ...]

    def to_dict(self) -> dict[str, Any]:
        return {self.op: [i.to_dict() for i in self.items]}


@dataclass(frozen=True)
class TimeDimension:
    dimension: str
    granularity: str | None = None
    date_range: str | tuple[str, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"dimension": self.dimension}
        if self.granularity:
            out["granularity"] = self.granularity
        if self.date_range is not None:
            out["dateRange"] = self.date_range if isinstance(self.date_range, str) else list(self.date_range)
        return out


@dataclass
class CubeQuery:
    measures: list[str] = field(default_factory=list)
    dimensions: list[str] = field(default_factory=list)
    time_dimensions: list[TimeDimension] = field(default_factory=list)
    filters: list[Filter | FilterGroup] = field(default_factory=list)
    segments: list[str] = field(default_factory=list)
    order: list[tuple[str, str]] = field(default_factory=list)
    limit: int | None = None
    offset: int | None = None
    total: bool = False
    order_given: bool = False

    @classmethod
    def parse(cls, raw: dict[str, Any] | str | CubeQuery) -> CubeQuery:
        if isinstance(raw, CubeQuery):
            return raw
        if isinstance(raw, str | bytes):
            try:
                raw = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise QueryError(f"query is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc
        raw = _checked(raw)
        q = cls()
        q.measures = [_member(m, "measures") for m in _list(raw, "measures")]
        for d in _list(raw, "dimensions"):
            if not isinstance(d, str):
                raise QueryError(f"dimensions: {d!r} is not a member name")
            match = DIMENSION_WITH_GRANULARITY_RE.match(d)
            if match and not MEMBER_RE.match(d):
                # "cube.time_dim.month" in dimensions is a time dimension with that granularity (as Cube)
                q.time_dimensions.append(TimeDimension(match.group(1), _granularity(match.group(2))))
            else:
                q.dimensions.append(_member(d, "dimensions"))
        q.time_dimensions = [_time_dimension(t) for t in _list(raw, "timeDimensions")] + q.time_dimensions
        q.filters = [_filter(f, 0) for f in _list(raw, "filters")]
        q.segments = [_member(s, "segments") for s in _list(raw, "segments")]
        q.order = _order(raw.get("order"))
        q.order_given = bool(q.order)
        q.limit = _int(raw.get("limit"), "limit", 1)
        q.offset = _int(raw.get("offset"), "offset", 0)
        total = raw.get("total", False)
        if not isinstance(total, bool):
            raise QueryError("total must be true or false")
        q.total = total
        if not (q.measures or q.dimensions or any(t.granularity for t in q.time_dimensions)):
            raise QueryError("query should contain measures, dimensions or timeDimensions with a granularity")
        return q

    def members(self) -> list[str]:
        """Every member named anywhere in the query (measures, dimensions, time dims, filters, segments)."""
        out = [*self.measures, *self.dimensions, *(t.dimension for t in self.time_dimensions), *self.segments]

        def walk(f: Filter | FilterGroup) -> None:
            if isinstance(f, Filter):
                out.append(f.member)
            else:
                for item in f.items:
                    walk(item)

        for f in self.filters:
            walk(f)
        return list(dict.fromkeys(out))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.measures:
            out["measures"] = list(self.measures)
        if self.dimensions:
            out["dimensions"] = list(self.dimensions)
        if self.time_dimensions:
            out["timeDimensions"] = [t.to_dict() for t in self.time_dimensions]
        if self.filters:
            out["filters"] = [f.to_dict() for f in self.filters]
        if self.segments:
            out["segments"] = list(self.segments)
        if self.order_given:
            out["order"] = [[m, d] for m, d in self.order]
        for key, value in (("limit", self.limit), ("offset", self.offset)):
            if value is not None:
                out[key] = value
        if self.total:
            out["total"] = True
        return out


def _list(raw: dict[str, Any], key: str) -> list[Any]:
    value = raw.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise QueryError(f"{key} must be a list")
    if len(value) > MAX_MEMBERS:
        raise QueryError(f"{key}: too many items ({len(value)} > {MAX_MEMBERS})")
    return value


def _member(value: Any, where: str) -> str:
    if not isinstance(value, str) or not MEMBER_RE.match(value):
        raise QueryError(f"{where}: {value!r} is not a member name like 'cube.member'")
    return value


def _granularity(value: Any) -> str:
    if value not in GRANULARITIES:
        raise QueryError(f"unknown granularity {value!r} (one of {', '.join(GRANULARITIES)})")
    return str(value)


def _time_dimension(raw: Any) -> TimeDimension:
    if not isinstance(raw, dict) or "dimension" not in raw:
        raise QueryError("each timeDimensions item needs a 'dimension'")
    unknown = set(raw) - {"dimension", "granularity", "dateRange"}
    if unknown:
        raise QueryError(f"timeDimensions: unknown key(s) {', '.join(sorted(unknown))}")
    granularity = raw.get("granularity")
    if granularity is not None:
        _granularity(granularity)
    date_range = raw.get("dateRange")
    if isinstance(date_range, list):
        if not 1 <= len(date_range) <= 2 or not all(isinstance(d, str) for d in date_range):
            raise QueryError("dateRange must be a string or a list of one or two date strings")
        date_range = tuple(date_range)
    elif date_range is not None and not isinstance(date_range, str):
        raise QueryError("dateRange must be a string or a list of one or two date strings")
    return TimeDimension(_member(raw["dimension"], "timeDimensions"), granularity, date_range)


def _filter_values(values: Any, member: str) -> list[str | None]:
    """A filter's values as strings (null stays None; booleans are "true"/"false")."""
    if values is None:
        values = []
    if not isinstance(values, list) or len(values) > MAX_FILTER_VALUES:
        raise QueryError(f"filter on {member}: values must be a list (at most {MAX_FILTER_VALUES})")
    out: list[str | None] = []
    for v in values:
        if v is None:
            out.append(None)
        elif isinstance(v, bool):
            out.append("true" if v else "false")
        elif isinstance(v, int | float | str):
            out.append(str(v))
        else:
            raise QueryError(f"filter on {member}: value {v!r} must be a string, number, boolean or null")
    return out


def _checked(raw: Any) -> dict[str, Any]:
    """``raw`` if it is a JSON object of known keys, grouped, in UTC."""
    if not isinstance(raw, dict):
        raise QueryError("query must be a JSON object")
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise QueryError(f"unknown query key(s): {', '.join(unknown)}")
    if raw.get("ungrouped"):
        raise QueryError("ungrouped queries are not supported")
    if raw.get("timezone") not in (None, "UTC", "Etc/UTC"):
        raise QueryError("only the UTC timezone is supported")
    return raw


def _filter(raw: Any, depth: int) -> Filter | FilterGroup:
    if depth > MAX_FILTER_DEPTH:
        raise QueryError("filters are nested too deeply")
    if not isinstance(raw, dict):
        raise QueryError(f"filter {raw!r} must be an object")
    if ("and" in raw) != ("or" in raw) and len(raw) == 1:
        op = "and" if "and" in raw else "or"
        items = raw[op]
        if not isinstance(items, list) or not items:
            raise QueryError(f"'{op}' needs a non-empty list of filters")
        return FilterGroup(op, tuple(_filter(i, depth + 1) for i in items))
    unknown = set(raw) - {"member", "dimension", "operator", "values"}
    if unknown:
        raise QueryError(f"filter: unknown key(s) {', '.join(sorted(unknown))}")
    if ("member" in raw) == ("dimension" in raw):
        raise QueryError(f"filter needs exactly one of 'member' or 'dimension': {json.dumps(raw)[:200]}")
    member = _member(raw.get("member") or raw.get("dimension"), "filters")
    operator = raw.get("operator")
    if operator not in OPERATORS:
        raise QueryError(f"filter on {member}: unknown operator {operator!r}")
    out = _filter_values(raw.get("values"), member)
    if not out and operator not in ("set", "notSet"):
        raise QueryError(f"filter on {member}: operator {operator} needs values")
    if operator in ("inDateRange", "notInDateRange", "onTheDate") and len(out) != 2:
        raise QueryError(f"filter on {member}: {operator} needs two values [from, to]")
    if operator in DATE_OPERATORS and any(v is None for v in out):
        raise QueryError(f"filter on {member}: {operator} values cannot be null")
    return Filter(member, operator, tuple(out))


def _order(raw: Any) -> list[tuple[str, str]]:
    if raw is None:
        return []
    if isinstance(raw, dict):
        items = list(raw.items())
    elif isinstance(raw, list):
        items = []
        for item in raw:
            if not isinstance(item, list | tuple) or len(item) != 2:
                raise QueryError("order must be an object {member: asc|desc} or a list of [member, asc|desc]")
            items.append((item[0], item[1]))
    else:
        raise QueryError("order must be an object {member: asc|desc} or a list of [member, asc|desc]")
    out = []
    for member, direction in items:
        if not isinstance(member, str) or not (MEMBER_RE.match(member) or DIMENSION_WITH_GRANULARITY_RE.match(member)):
            raise QueryError(f"order: {member!r} is not a member name")
        if direction not in ("asc", "desc"):
            raise QueryError(f"order: direction for {member} must be 'asc' or 'desc'")
        out.append((member, direction))
    return out


def _int(value: Any, name: str, minimum: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise QueryError(f"{name} must be an integer >= {minimum}")
    return value
