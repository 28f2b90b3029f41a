"""Parse Cube YAML files into a SemanticModel and validate it (references, joins, keys, names)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot.errors import ParseError

from cube_models._preaggs import check_pre_aggregations, parse_pre_aggregation
from cube_models._refs import Ref, classify, to_placeholders
from cube_models._types import (
    DIMENSION_TYPES,
    MEASURE_TYPES,
    RELATIONSHIPS,
    Cube,
    Dimension,
    Join,
    Measure,
    Member,
    RollingWindow,
    Segment,
    SemanticModel,
    View,
)
from cube_models.errors import ModelError
from cubesage_core import safe_yaml

_CAMEL = {
    "sqlTable": "sql_table",
    "preAggregations": "pre_aggregations",
    "primaryKey": "primary_key",
    "joinPath": "join_path",
    "countDistinct": "count_distinct",
    "countDistinctApprox": "count_distinct_approx",
    "rollingWindow": "rolling_window",
}
_INTERVAL = re.compile(r"^(unbounded|[1-9][0-9]* (second|minute|hour|day|week|month|year)s?)$")
_ROLLING_TYPES = ("count", "count_distinct", "sum", "avg", "min", "max")
# member keys that change numbers and that the built-in compiler does not implement: refused, never ignored
_UNSUPPORTED = {
    "measure": ("cumulative", "multi_stage", "time_shift", "reduce_by", "group_by", "add_group_by"),
    "dimension": ("case", "sub_query", "subQuery", "multi_stage"),
}


def _refuse_unsupported(raw: dict[str, Any], kind: str, file: str, cube: str) -> None:
    found = [k for k in _UNSUPPORTED[kind] if raw.get(k)]
    if found:
        raise ModelError(f"{kind} option {', '.join(found)} is not supported", file, cube, raw.get("name"))


_MULTIPLIED_TYPES = ("sum", "avg", "count", "number")


def _get(raw: dict[str, Any], key: str, default: Any = None) -> Any:
    if key in raw:
        return raw[key]
    camel = next((c for c, s in _CAMEL.items() if s == key), None)
    return raw.get(camel, default) if camel else default


def _text(raw: dict[str, Any], key: str, file: str, cube: str | None, member: str | None = None) -> str | None:
    """``raw[key]`` as text (numbers allowed, as in ``sql: 1``); a list or mapping where text belongs is an error."""
    value = _get(raw, key)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise ModelError(f"'{key}' must be text, not a {type(value).__name__}", file, cube, member)


def _mapping(raw: dict[str, Any], file: str, cube: str | None, member: str | None = None) -> dict[str, Any]:
    value = raw.get("meta") or {}
    if not isinstance(value, dict):
        raise ModelError("'meta' must be a mapping", file, cube, member)
    return value


def _as_list(value: Any, file: str, cube: str | None, what: str) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ModelError(f"'{what}' must be a list of mappings", file, cube)
    return value


def _check_sql(sql: str, file: str, cube: str, member: str | None) -> None:
    text, _ = to_placeholders(sql)
    try:
        sqlglot.parse_one(text, read="postgres")
    except ParseError as exc:
        raise ModelError(f"SQL does not parse: {str(exc).splitlines()[0]}", file, cube, member) from exc


def _rolling_window(raw: Any, mtype: str, file: str, cube: str, member: str) -> RollingWindow | None:
    """A measure's ``rolling_window`` (Cube's trailing/leading/offset); ``type`` must be rollable."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ModelError("'rolling_window' must be a mapping", file, cube, member)
    if mtype not in _ROLLING_TYPES:
        raise ModelError(
            f"a {mtype} measure cannot have a rolling_window (one of {', '.join(_ROLLING_TYPES)})", file, cube, member
        )
    window = RollingWindow(trailing=raw.get("trailing"), leading=raw.get("leading"), offset=raw.get("offset", "end"))
    for key in ("trailing", "leading"):
        value = getattr(window, key)
        if value is not None and not (isinstance(value, str) and _INTERVAL.match(value)):
            raise ModelError(f"rolling_window {key} {value!r} is not 'unbounded' or '<n> <unit>'", file, cube, member)
    if window.offset not in ("start", "end"):
        raise ModelError(f"rolling_window offset {window.offset!r} is not 'start' or 'end'", file, cube, member)
    unknown = set(raw) - {"trailing", "leading", "offset"}
    if unknown:
        raise ModelError(f"rolling_window: unsupported keys {sorted(unknown)}", file, cube, member)
    return window


def _parse_measure(m: dict[str, Any], file: str, cube: str) -> Measure:
    mtype = m.get("type")
    mtype = _CAMEL.get(mtype, mtype) if isinstance(mtype, str) else mtype
    if mtype not in MEASURE_TYPES:
        raise ModelError(
            f"unknown measure type {m.get('type')!r} (one of {', '.join(MEASURE_TYPES)})", file, cube, m["name"]
        )
    sql = _text(m, "sql", file, cube, m["name"])
    if mtype != "count" and not sql:
        raise ModelError(f"a measure of type {mtype} needs 'sql'", file, cube, m["name"])
    _refuse_unsupported(m, "measure", file, cube)
    filters = _as_list(m.get("filters"), file, cube, "filters")
    conditions = tuple(_text(f, "sql", file, cube, m["name"]) for f in filters)
    if any(c is None for c in conditions):
        raise ModelError("each measure filter needs 'sql'", file, cube, m["name"])
    return Measure(
        cube=cube,
        name=m["name"],
        type=mtype,
        sql=sql,
        filters=tuple(str(c) for c in conditions),
        title=_text(m, "title", file, cube, m["name"]) or "",
        description=(_text(m, "description", file, cube, m["name"]) or "").strip(),
        format=_text(m, "format", file, cube, m["name"]),
        meta=_mapping(m, file, cube, m["name"]),
        public=bool(m.get("public", m.get("shown", True))),
        rolling_window=_rolling_window(_get(m, "rolling_window"), mtype, file, cube, m["name"]),
    )


def _parse_cube(raw: dict[str, Any], file: str) -> Cube:
    name = raw.get("name")
    if not isinstance(name, str) or not name.isidentifier():
        raise ModelError(f"cube name {name!r} is missing or not an identifier", file)
    sql_table, sql = _text(raw, "sql_table", file, name), _text(raw, "sql", file, name)
    if bool(sql_table) == bool(sql):
        raise ModelError("a cube needs exactly one of 'sql_table' or 'sql'", file, name)
    cube = Cube(
        name=name,
        file=file,
        title=_text(raw, "title", file, name) or "",
        description=(_text(raw, "description", file, name) or "").strip(),
        sql_table=sql_table,
        sql=sql.strip() if sql else None,
        meta=_mapping(raw, file, name),
    )
    if cube.sql:
        _check_sql(cube.sql, file, name, None)
    seen: set[str] = set()

    def claim(member: object) -> None:
        if not isinstance(member, str) or not member.isidentifier():
            raise ModelError(f"member name {member!r} is missing or not an identifier", file, name)
        if member in seen:
            raise ModelError("duplicated member name", file, name, member)
        seen.add(member)

    for m in _as_list(raw.get("measures"), file, name, "measures"):
        claim(m.get("name"))
        cube.measures[m["name"]] = _parse_measure(m, file, name)
    for d in _as_list(raw.get("dimensions"), file, name, "dimensions"):
        claim(d.get("name"))
        cube.dimensions[d["name"]] = _parse_dimension(d, file, name)
    cube.pre_aggregations = [
        parse_pre_aggregation(p, name, file)
        for p in _as_list(_get(raw, "pre_aggregations"), file, name, "pre_aggregations")
    ]
    for s in _as_list(raw.get("segments"), file, name, "segments"):
        claim(s.get("name"))
        cube.segments[s["name"]] = _parse_segment(s, file, name)
    cube.joins = _parse_joins(raw.get("joins") or [], file, name)
    for member in cube.members():
        _check_sql(member.sql or "1", file, name, member.name)
        for f in getattr(member, "filters", ()):
            _check_sql(f, file, name, member.name)
    return cube


def _parse_dimension(d: dict[str, Any], file: str, cube: str) -> Dimension:
    _refuse_unsupported(d, "dimension", file, cube)
    if d.get("type") not in DIMENSION_TYPES:
        raise ModelError(
            f"unknown dimension type {d.get('type')!r} (one of {', '.join(DIMENSION_TYPES)})", file, cube, d["name"]
        )
    dim_sql = _text(d, "sql", file, cube, d["name"])
    if not dim_sql:
        raise ModelError("a dimension needs 'sql'", file, cube, d["name"])
    return Dimension(
        cube=cube,
        name=d["name"],
        type=d["type"],
        sql=dim_sql,
        primary_key=bool(_get(d, "primary_key", False)),
        title=_text(d, "title", file, cube, d["name"]) or "",
        description=(_text(d, "description", file, cube, d["name"]) or "").strip(),
        format=_text(d, "format", file, cube, d["name"]),
        meta=_mapping(d, file, cube, d["name"]),
        public=bool(d.get("public", d.get("shown", not _get(d, "primary_key", False)))),
    )


def _parse_segment(s: dict[str, Any], file: str, cube: str) -> Segment:
    seg_sql = _text(s, "sql", file, cube, s["name"])
    if not seg_sql:
        raise ModelError("a segment needs 'sql'", file, cube, s["name"])
    return Segment(
        cube=cube,
        name=s["name"],
        sql=seg_sql,
        title=_text(s, "title", file, cube, s["name"]) or "",
        description=(_text(s, "description", file, cube, s["name"]) or "").strip(),
        meta=_mapping(s, file, cube, s["name"]),
    )


def _parse_joins(joins: Any, file: str, cube: str) -> list[Join]:
    if isinstance(joins, dict):  # older object form: {target: {relationship, sql}}
        joins = [{"name": k, **v} if isinstance(v, dict) else v for k, v in joins.items()]
    out: list[Join] = []
    targets: set[str | None] = set()
    for j in _as_list(joins, file, cube, "joins"):
        target, rel = _text(j, "name", file, cube), j.get("relationship")
        if not isinstance(rel, str) or rel not in RELATIONSHIPS:
            raise ModelError(
                f"join to {target!r}: unknown relationship {rel!r} (one of {', '.join(sorted(RELATIONSHIPS))})",
                file,
                cube,
            )
        join_sql = _text(j, "sql", file, cube)
        if not join_sql:
            raise ModelError(f"join to {target!r} needs 'sql'", file, cube)
        if target in targets:
            raise ModelError(f"duplicated join to '{target}'", file, cube)
        targets.add(target)
        out.append(Join(source=cube, target=str(target), relationship=RELATIONSHIPS[rel], sql=join_sql))
    return out


def _check_refs(model: SemanticModel) -> None:
    names = set(model.cubes)
    graph: dict[str, list[str]] = {}
    for cube in model.cubes.values():
        own = {*cube.measures, *cube.dimensions, *cube.segments}
        for member in cube.members():
            graph[member.path] = _member_deps(model, cube, member, names, own)
        for join in cube.joins:
            _check_join(model, cube, join, names, own)
    _check_member_cycles(model, graph)


def _member_deps(model: SemanticModel, cube: Cube, member: Member, names: set[str], own: set[str]) -> list[str]:
    """The member paths ``member``'s SQL (and filters) reference; wrong references raise."""
    deps: list[str] = []
    for text in [member.sql or "", *getattr(member, "filters", ())]:
        for raw, ref in classify(text, cube.name, names, own):
            if isinstance(ref, str):
                raise ModelError(ref, cube.file, cube.name, member.name)
            if ref.kind != "member":
                continue
            target = model.find_member(ref.path)
            if target is None:
                raise ModelError(f"unknown member '{ref.path}' in {raw}", cube.file, cube.name, member.name)
            if (
                isinstance(member, Measure)
                and isinstance(target, Measure)
                and member.type != "number"
                and text == member.sql
            ):
                raise ModelError(
                    f"a {member.type} measure cannot reference measure '{ref.path}'; use type number",
                    cube.file,
                    cube.name,
                    member.name,
                )
            if not isinstance(member, Measure) and isinstance(target, Measure):
                raise ModelError(
                    f"a {member.kind} cannot reference measure '{ref.path}'", cube.file, cube.name, member.name
                )
            deps.append(ref.path)
    return deps


def _check_join(model: SemanticModel, cube: Cube, join: Join, names: set[str], own: set[str]) -> None:
    if join.target not in model.cubes:
        raise ModelError(f"join to unknown cube '{join.target}'", cube.file, cube.name)
    if join.target == cube.name:
        raise ModelError("a cube cannot join itself (join cycle)", cube.file, cube.name)
    for raw, ref in classify(join.sql, cube.name, names, own):
        if isinstance(ref, str):
            raise ModelError(f"join to '{join.target}': {ref}", cube.file, cube.name)
        if ref.kind == "member" and model.find_member(ref.path) is None:
            raise ModelError(f"join to '{join.target}': unknown member '{ref.path}' in {raw}", cube.file, cube.name)


def _check_member_cycles(model: SemanticModel, graph: dict[str, list[str]]) -> None:
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for dep in graph.get(node, []):
            if state.get(dep) == 1:
                cycle = [*trail[trail.index(dep) :], dep] if dep in trail else [node, dep]
                cube = model.cubes[node.split(".")[0]]
                raise ModelError(f"reference cycle {' -> '.join(cycle)}", cube.file, cube.name, node.split(".")[1])
            if state.get(dep) is None:
                visit(dep, [*trail, dep])
        state[node] = 2

    for node in graph:
        if node not in state:
            visit(node, [node])


def _check_joins(model: SemanticModel) -> None:
    """Directed join cycles of 3+ cubes make join paths ambiguous; fan-out needs primary keys (as Cube)."""
    edges = {c.name: [j.target for j in c.joins] for c in model.cubes.values()}

    def find_cycle(start: str) -> list[str] | None:
        stack = [(start, [start])]
        while stack:
            node, path = stack.pop()
            for nxt in edges.get(node, []):
                if nxt == start and len(path) >= 3:
                    return [*path, start]
                if nxt not in path:
                    stack.append((nxt, [*path, nxt]))
        return None

    for name in sorted(model.cubes):
        cycle = find_cycle(name)
        if cycle:
            cube = model.cubes[name]
            raise ModelError(
                f"join cycle {' -> '.join(cycle)}: paths between these cubes are ambiguous; "
                "declare these joins in one direction only",
                cube.file,
                name,
            )
    for join in model.joins():
        for side in (join.source, join.target):
            cube = model.cubes[side]
            multiplied = [m for m in cube.measures.values() if m.type in _MULTIPLIED_TYPES]
            if not cube.primary_keys and multiplied:
                raise ModelError(
                    f"no primary key, but the cube is used in the {join.relationship} join {join.edge_id}: "
                    "a primary key is required so aggregates are not multiplied by the join",
                    cube.file,
                    cube.name,
                )


def _parse_view(raw: dict[str, Any], file: str, model: SemanticModel) -> View:
    name = raw.get("name")
    if not isinstance(name, str) or not name.isidentifier():
        raise ModelError(f"view name {name!r} is missing or not an identifier", file)
    view = View(
        name=name,
        file=file,
        title=_text(raw, "title", file, name) or "",
        description=(_text(raw, "description", file, name) or "").strip(),
    )
    for entry in _as_list(raw.get("cubes"), file, name, "cubes"):
        path = str(_get(entry, "join_path") or "")
        cubes = path.split(".")
        if not path or any(c not in model.cubes for c in cubes):
            raise ModelError(f"join_path {path!r} names an unknown cube", file, name)
        cube = model.cubes[cubes[-1]]
        includes = entry.get("includes", "*")
        items: list[tuple[str, str]] = []
        if includes == "*":
            items = [(m, m) for m in (*cube.measures, *cube.dimensions, *cube.segments)]
        else:
            for inc in includes or []:
                member, alias = (
                    (inc.get("name"), inc.get("alias") or inc.get("name")) if isinstance(inc, dict) else (inc, inc)
                )
                if cube.member(str(member)) is None:
                    raise ModelError(f"includes unknown member '{cube.name}.{member}'", file, name)
                items.append((str(member), str(alias)))
        excludes = set(entry.get("excludes") or [])
        for member, alias in items:
            if member in excludes:
                continue
            key = f"{entry.get('alias') or cube.name}_{alias}" if entry.get("prefix") else alias
            if key in view.members:
                raise ModelError(f"duplicated member name '{key}' in view", file, name)
            view.members[key] = f"{cube.name}.{member}"
            view.join_paths[key] = cubes
    return view


def build_model(files: list[Path], source: str = "") -> SemanticModel:
    model = SemanticModel(cubes={}, source=source)
    raw_views: list[tuple[dict[str, Any], str]] = []
    for path in files:
        file = str(path)
        try:
            doc = safe_yaml.load(path.read_text(encoding="utf-8")) or {}
        except safe_yaml.YamlLimitError as exc:
            raise ModelError(f"invalid YAML: {exc}", file) from exc
        if not isinstance(doc, dict):
            raise ModelError("top level must be a mapping with 'cubes' and/or 'views'", file)
        for raw in _as_list(doc.get("cubes"), file, None, "cubes"):
            cube = _parse_cube(raw, file)
            if cube.name in model.cubes:
                raise ModelError(f"duplicated cube name (also in {model.cubes[cube.name].file})", file, cube.name)
            model.cubes[cube.name] = cube
        raw_views += [(v, file) for v in _as_list(doc.get("views"), file, None, "views")]
    _check_refs(model)
    _check_joins(model)
    check_pre_aggregations(model)
    for raw, file in raw_views:
        view = _parse_view(raw, file, model)
        if view.name in model.cubes or view.name in model.views:
            raise ModelError("duplicated cube/view name", file, view.name)
        model.views[view.name] = view
    return model


def member_refs(sql: str, cube: Cube, model: SemanticModel) -> list[Ref]:
    """The resolved references of one SQL snippet of ``cube`` (model already validated)."""
    own = {*cube.measures, *cube.dimensions, *cube.segments}
    return [r for _, r in classify(sql, cube.name, set(model.cubes), own) if isinstance(r, Ref)]
