"""The rows behind an aggregate: the Cube query a mixed question's second clause asks for.

"How many invoices came in above $15, and which ones were they?", "total order value for customer 10, and
which orders make it up?", "top 3 customers by spend, and show me their invoices": the rows are those of
a cube (the one the clause names, else the cube of the measure) under the same filters, segments and date
ranges as the aggregate, with each group-by dimension filtered to the values of the aggregate rows shown
(the top 3 customers), and the segments that say which rows a filtered measure counts ("completed
orders": the completed segment). The query asks for dimensions only (Cube returns distinct rows): the
cube's key first, then its other public dimensions. A filter on a measure ("customers who spent more than $40")
bounds groups, not rows: no drill-down then (the detail path answers).
"""

from __future__ import annotations

from typing import Any

import sqlglot
from sqlglot import exp

from cube_models.model import SemanticModel

DRILL_DIMENSIONS = 8


def drill_query(
    cube_query: dict[str, Any], rows: list[dict[str, Any]], model: SemanticModel, target: str, limit: int, shown: int
) -> dict[str, Any] | None:
    """The dimensions-only query for the rows of cube ``target`` behind the first ``shown`` aggregate rows;
    None when the aggregate bounds a measure or ``target`` has no dimension to show."""
    cube = model.cubes.get(target)
    if cube is None or any(_is_measure(model, f) for f in cube_query.get("filters") or []):
        return None
    if cube_query.get("limit") and any(td.get("granularity") for td in cube_query.get("timeDimensions") or []):
        return None  # some periods ranked out ("the best month"): the listing path dates the rows (``router.behind``)
    picked = _measure_rows(model, cube_query.get("measures") or [])
    if picked is None:
        return None  # a measure counts only some rows, and neither a segment nor a column's values say which
    implied, picking = picked
    dimensions = _row_dimensions(cube)
    if not dimensions:
        return None
    filters = [dict(f) for f in cube_query.get("filters") or []]
    filters += [f for f in picking if f not in filters]
    for member in cube_query.get("dimensions") or []:
        values = [str(v) for v in dict.fromkeys(r.get(member) for r in rows[:shown]) if v is not None]
        if values:
            filters.append({"member": member, "operator": "equals", "values": values})
    query: dict[str, Any] = {"dimensions": dimensions, "limit": limit, "order": [[dimensions[0], "asc"]]}
    if filters:
        query["filters"] = filters
    segments = list(dict.fromkeys([*(cube_query.get("segments") or []), *implied]))
    if segments:
        query["segments"] = segments
    ranges = [
        {"dimension": td["dimension"], "dateRange": td["dateRange"]}
        for td in cube_query.get("timeDimensions") or []
        if td.get("dateRange")
    ]
    if ranges:
        query["timeDimensions"] = ranges
    return query


def _measure_rows(model: SemanticModel, measures: list[str]) -> tuple[list[str], list[dict[str, Any]]] | None:
    """The segments, and the filters on a dimension's values, that say which rows the filtered measures count
    ("Cancelled orders": the cancelled segment, else status = cancelled); None when a filter is neither."""
    segments: list[str] = []
    filters: list[dict[str, Any]] = []
    for path in measures:
        measure = model.find_member(path)
        found = segments_holding(model, measure) if measure is not None else []
        values = values_holding(model, measure) if found is None else []
        if found is None and values is None:
            return None
        segments += found or []
        filters += [{"member": member, "operator": "equals", "values": v} for member, v in values or []]
    return segments, filters


def segments_holding(model: Any, measure: Any) -> list[str] | None:
    """The segments of a measure's cube whose SQL is its ``filters``' ("Completed orders": the completed
    segment, same SQL), one per filter; None when some filter is no segment's."""
    out: list[str] = []
    for sql in getattr(measure, "filters", ()) or ():
        same = [s.path for s in model.cubes[measure.cube].segments.values() if _sql(s.sql) == _sql(sql)]
        if not same:
            return None
        out.append(same[0])
    return out


def values_holding(model: Any, measure: Any) -> list[tuple[str, list[str]]] | None:
    """The dimension values that say which rows a filtered measure picks, one (dimension, values) per filter
    ("{CUBE}.l_returnflag = 'R'": Return flag = R); None when some filter is no equality of a public
    dimension's column to text literals."""
    out = []
    for sql in getattr(measure, "filters", ()) or ():
        found = column_values(model.cubes[measure.cube], str(sql))
        if found is None:
            return None
        out.append(found)
    return out


def column_values(cube: Any, sql: str) -> tuple[str, list[str]] | None:
    """(the public dimension, the values) when ``sql`` is "<its column> = '<text>'" or "<its column> IN (<texts>)"
    (a filtered measure's filter, a segment); None for any other condition."""
    try:
        tree = sqlglot.parse_one(sql.replace("{CUBE}", "cube_"), read="postgres")
    except sqlglot.errors.SqlglotError:
        return None
    if isinstance(tree, exp.EQ) and isinstance(tree.expression, exp.Literal):
        literals = [tree.expression]
    elif isinstance(tree, exp.In) and not tree.args.get("query"):
        literals = list(tree.expressions)
    else:
        return None
    if not isinstance(tree.this, exp.Column) or not all(isinstance(v, exp.Literal) and v.is_string for v in literals):
        return None
    name = tree.this.name.lower()
    dims = [d for d in cube.dimensions.values() if d.public and _sql(d.sql or "").replace("{cube}.", "") == name]
    return (dims[0].path, [str(v.this) for v in literals]) if dims else None


def _sql(text: str) -> str:
    return "".join(str(text).split()).lower()


def _is_measure(model: SemanticModel, f: dict[str, Any]) -> bool:
    member = model.find_member(f.get("member") or "")
    nested = [*f.get("or", []), *f.get("and", [])]
    return getattr(member, "kind", "") == "measure" or any(_is_measure(model, g) for g in nested)


def _row_dimensions(cube: Any) -> list[str]:
    """The key (public or not: a row is known by it), the other public non-time dimensions, then one time
    dimension."""
    public = [d for d in cube.dimensions.values() if d.public]
    keys = [d for d in cube.dimensions.values() if d.primary_key]
    plain = [d for d in public if not d.primary_key and d.type != "time"]
    times = [d for d in public if d.type == "time"][:1]
    return [f"{cube.name}.{d.name}" for d in [*keys, *plain][: DRILL_DIMENSIONS - len(times)] + times]
