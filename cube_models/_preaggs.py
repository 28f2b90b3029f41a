"""Parse and check a cube's ``pre_aggregations`` (Cube's rollup definitions) into ``PreAggregation``s.

Only ``type: rollup`` is built by cubesage; every other type, and options that change which rows a rollup
holds (``build_range_*``, ``union_with_source_data``, several ``time_dimensions``), is a ``ModelError``, never
ignored. Options about how Cube stores or schedules a rollup (``external``, ``partition_granularity``,
``refresh_key``, ``scheduled_refresh``, ``indexes``, ``sql_alias``) do not change its numbers and are accepted.
"""

from __future__ import annotations

from typing import Any

from cube_models._types import GRANULARITIES, Dimension, Measure, PreAggregation, Segment, SemanticModel
from cube_models.errors import ModelError

_STORAGE_KEYS = {
    "external",
    "partition_granularity",
    "partitionGranularity",
    "refresh_key",
    "refreshKey",
    "scheduled_refresh",
    "scheduledRefresh",
    "indexes",
    "sql_alias",
    "sqlAlias",
    "type",
    "name",
    "measures",
    "dimensions",
    "segments",
    "time_dimension",
    "timeDimension",
    "granularity",
    "allow_non_strict_date_range_match",
    "allowNonStrictDateRangeMatch",
    "unique_key_columns",
    "uniqueKeyColumns",
    "build_range_start",
    "buildRangeStart",
    "build_range_end",
    "buildRangeEnd",
    "union_with_source_data",
    "unionWithSourceData",
    "time_dimensions",
    "timeDimensions",
}
_REFUSED = (
    "build_range_start",
    "buildRangeStart",
    "build_range_end",
    "buildRangeEnd",
    "union_with_source_data",
    "unionWithSourceData",
    "time_dimensions",
    "timeDimensions",
)


def _ref(value: Any, cube: str, file: str, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ModelError(f"pre-aggregation {where}: member {value!r} is not a name", file, cube)
    head, dot, tail = value.strip().partition(".")
    if not dot:
        return f"{cube}.{head}"
    return f"{cube}.{tail}" if head in ("CUBE", "{CUBE}") else value.strip()


def _refs(raw: dict[str, Any], key: str, cube: str, file: str, name: str) -> tuple[str, ...]:
    value = raw.get(key) or []
    if not isinstance(value, list):
        raise ModelError(f"pre-aggregation {name}: '{key}' must be a list", file, cube)
    return tuple(dict.fromkeys(_ref(v, cube, file, name) for v in value))


def parse_pre_aggregation(raw: Any, cube: str, file: str) -> PreAggregation:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or not raw["name"].isidentifier():
        raise ModelError(f"a pre-aggregation needs an identifier 'name' ({raw!r})", file, cube)
    name = raw["name"]
    unknown = sorted(set(raw) - _STORAGE_KEYS)
    if unknown:
        raise ModelError(f"pre-aggregation {name}: unknown keys {unknown}", file, cube)
    kind = raw.get("type", "rollup")
    if kind != "rollup":
        raise ModelError(f"pre-aggregation {name}: type {kind!r} is not supported (only rollup)", file, cube)
    refused = [k for k in _REFUSED if raw.get(k)]
    if refused:
        raise ModelError(f"pre-aggregation {name}: {', '.join(refused)} is not supported", file, cube)
    time_dim = raw.get("time_dimension", raw.get("timeDimension"))
    granularity = raw.get("granularity")
    if (time_dim is None) != (granularity is None):
        raise ModelError(f"pre-aggregation {name}: time_dimension and granularity go together", file, cube)
    if granularity is not None and granularity not in GRANULARITIES:
        raise ModelError(f"pre-aggregation {name}: unknown granularity {granularity!r}", file, cube)
    non_strict = raw.get("allow_non_strict_date_range_match", raw.get("allowNonStrictDateRangeMatch", False))
    return PreAggregation(
        cube=cube,
        name=name,
        measures=_refs(raw, "measures", cube, file, name),
        dimensions=_refs(raw, "dimensions", cube, file, name),
        segments=_refs(raw, "segments", cube, file, name),
        time_dimension=_ref(time_dim, cube, file, name) if time_dim is not None else None,
        granularity=granularity,
        allow_non_strict_date_range_match=bool(non_strict),
    )


def check_pre_aggregations(model: SemanticModel) -> None:
    """Every referenced member exists and has the kind its list says (after all cubes are loaded)."""
    for cube in model.cubes.values():
        seen: set[str] = set()
        for pre in cube.pre_aggregations:
            if pre.name in seen:
                raise ModelError(f"duplicated pre-aggregation name {pre.name!r}", cube.file, cube.name)
            seen.add(pre.name)
            kinds: list[tuple[tuple[str, ...], type]] = [
                (pre.measures, Measure),
                (pre.dimensions, Dimension),
                (pre.segments, Segment),
            ]
            if pre.time_dimension:
                kinds.append(((pre.time_dimension,), Dimension))
            for paths, kind in kinds:
                for path in paths:
                    member = model.find_member(path)
                    if member is None or not isinstance(member, kind):
                        raise ModelError(
                            f"pre-aggregation {pre.name}: '{path}' is not a {kind.__name__.lower()}",
                            cube.file,
                            cube.name,
                        )
                    if member.cube != path.split(".")[0]:
                        raise ModelError(
                            f"pre-aggregation {pre.name}: '{path}' names a view member", cube.file, cube.name
                        )
            if pre.time_dimension and model.member(pre.time_dimension).type != "time":
                raise ModelError(
                    f"pre-aggregation {pre.name}: '{pre.time_dimension}' is not a time dimension", cube.file, cube.name
                )
            if not pre.measures and not pre.dimensions and not pre.time_dimension:
                raise ModelError(f"pre-aggregation {pre.name}: no members", cube.file, cube.name)
