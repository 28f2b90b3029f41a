"""The semantic model's types: cubes, measures, dimensions, segments, joins, views and the model itself.

Public through ``cube_models.model``; the loader (``_loader``, ``_preaggs``) builds them from Cube YAML.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from cube_models.errors import QueryError

MEASURE_TYPES = ("count", "count_distinct", "count_distinct_approx", "sum", "avg", "min", "max", "number")
DIMENSION_TYPES = ("string", "number", "time", "boolean")
RELATIONSHIPS = {
    "many_to_one": "many_to_one",
    "belongs_to": "many_to_one",
    "belongsTo": "many_to_one",
    "one_to_many": "one_to_many",
    "has_many": "one_to_many",
    "hasMany": "one_to_many",
    "one_to_one": "one_to_one",
    "has_one": "one_to_one",
    "hasOne": "one_to_one",
}
GRANULARITIES = ("second", "minute", "hour", "day", "week", "month", "quarter", "year")


@dataclass(frozen=True)
class RollingWindow:
    """A measure's ``rolling_window``: ``trailing``/``leading`` are ``"<n> <unit>"``, ``"unbounded"`` or None."""

    trailing: str | None = None
    leading: str | None = None
    offset: str = "end"  # end | start


@dataclass(frozen=True)
class Measure:
    cube: str
    name: str
    type: str
    sql: str | None = None
    filters: tuple[str, ...] = ()
    title: str = ""
    description: str = ""
    format: str | None = None
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    public: bool = True
    rolling_window: RollingWindow | None = None
    kind = "measure"

    @property
    def path(self) -> str:
        return f"{self.cube}.{self.name}"


@dataclass(frozen=True)
class Dimension:
    cube: str
    name: str
    type: str
    sql: str
    primary_key: bool = False
    title: str = ""
    description: str = ""
    format: str | None = None
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    public: bool = True
    kind = "dimension"

    @property
    def path(self) -> str:
        return f"{self.cube}.{self.name}"


@dataclass(frozen=True)
class Segment:
    cube: str
    name: str
    sql: str
    title: str = ""
    description: str = ""
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    kind = "segment"
    type = "segment"

    @property
    def path(self) -> str:
        return f"{self.cube}.{self.name}"


Member = Measure | Dimension | Segment


@dataclass(frozen=True)
class PreAggregation:
    """A cube's ``rollup`` pre-aggregation: member paths as written (``CUBE.x`` resolved to the cube), the time
    dimension with its granularity; cubesage builds it as a table (``cube_models.rollups``)."""

    cube: str
    name: str
    measures: tuple[str, ...] = ()
    dimensions: tuple[str, ...] = ()
    segments: tuple[str, ...] = ()
    time_dimension: str | None = None
    granularity: str | None = None
    allow_non_strict_date_range_match: bool = False

    @property
    def path(self) -> str:
        return f"{self.cube}.{self.name}"


@dataclass(frozen=True)
class Join:
    """A join declared in cube ``source`` towards ``target``; Cube's joins are directed."""

    source: str
    target: str
    relationship: str  # many_to_one | one_to_many | one_to_one
    sql: str

    @property
    def edge_id(self) -> str:
        return f"{self.source}->{self.target}"


@dataclass
class Cube:
    name: str
    file: str
    title: str = ""
    description: str = ""
    sql_table: str | None = None
    sql: str | None = None
    measures: dict[str, Measure] = field(default_factory=dict)
    dimensions: dict[str, Dimension] = field(default_factory=dict)
    segments: dict[str, Segment] = field(default_factory=dict)
    joins: list[Join] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    pre_aggregations: list[PreAggregation] = field(default_factory=list)

    @property
    def primary_keys(self) -> list[Dimension]:
        return [d for d in self.dimensions.values() if d.primary_key]

    @property
    def time_dimensions(self) -> list[Dimension]:
        return [d for d in self.dimensions.values() if d.type == "time"]

    def member(self, name: str) -> Member | None:
        return self.measures.get(name) or self.dimensions.get(name) or self.segments.get(name)

    def members(self) -> list[Member]:
        """Measures, then dimensions, then segments."""
        return [*self.measures.values(), *self.dimensions.values(), *self.segments.values()]


@dataclass
class View:
    """A view: members re-exported from cubes along join paths (``view.member`` -> ``cube.member``)."""

    name: str
    file: str
    title: str = ""
    description: str = ""
    members: dict[str, str] = field(default_factory=dict)  # view member name -> cube member path
    join_paths: dict[str, list[str]] = field(default_factory=dict)  # view member name -> cubes from root


@dataclass
class SemanticModel:
    """All cubes and views of one model folder, with lookups and the directed join graph."""

    cubes: dict[str, Cube]
    views: dict[str, View] = field(default_factory=dict)
    source: str = ""

    # ---- member lookups -------------------------------------------------------------------
    def member(self, path: str) -> Member:
        """``"orders.count"`` -> the Measure/Dimension/Segment; view members resolve to their cube member."""
        found = self.find_member(path)
        if found is None:
            raise QueryError(f"unknown member '{path}'")
        return found

    def find_member(self, path: str) -> Member | None:
        cube_name, _, name = path.partition(".")
        cube = self.cubes.get(cube_name)
        if cube is not None:
            return cube.member(name)
        view = self.views.get(cube_name)
        if view is not None and name in view.members:
            return self.find_member(view.members[name])
        return None

    def resolve_path(self, path: str) -> str:
        """A view member path -> the underlying cube member path (cube paths are returned as is)."""
        cube_name, _, name = path.partition(".")
        view = self.views.get(cube_name)
        if view is not None and name in view.members:
            return view.members[name]
        return path

    def measures(self) -> list[Measure]:
        return [m for c in self.cubes.values() for m in c.measures.values()]

    def dimensions(self) -> list[Dimension]:
        return [d for c in self.cubes.values() for d in c.dimensions.values()]

    def segments(self) -> list[Segment]:
        return [s for c in self.cubes.values() for s in c.segments.values()]

    def member_paths(self) -> list[str]:
        paths = [m.path for c in self.cubes.values() for m in c.members()]
        paths += [f"{v.name}.{n}" for v in self.views.values() for n in v.members]
        return paths

    def joins(self) -> list[Join]:
        return [j for c in self.cubes.values() for j in c.joins]

    def pre_aggregations(self) -> list[PreAggregation]:
        return [p for c in self.cubes.values() for p in c.pre_aggregations]

    def join(self, source: str, target: str) -> Join | None:
        cube = self.cubes.get(source)
        return next((j for j in cube.joins if j.target == target), None) if cube else None

    def referrers(self, cube_name: str) -> set[str]:
        """The other cubes that join to this one many_to_one: their rows refer to its rows (an order to its
        customer)."""
        return {
            c.name
            for c in self.cubes.values()
            if c.name != cube_name
            for j in c.joins
            if j.target == cube_name and j.relationship == "many_to_one"
        }

    # ---- time dimensions ------------------------------------------------------------------
    def time_dimension_for(self, measure_name: str) -> str | None:
        """The time dimension a measure is dated by: its meta.time_dimension, else its cube's first time
        dimension, else the first time dimension reachable through many_to_one joins (breadth first)."""
        member = self.find_member(measure_name)
        if not isinstance(member, Measure):
            return None
        explicit = member.meta.get("time_dimension")
        if explicit:  # "debut" names the measure's own cube's dimension, "orders.created_at" any cube's
            return str(explicit) if "." in str(explicit) else f"{member.cube}.{explicit}"
        return self.cube_time_dimension(member.cube)

    def cube_time_dimension(self, cube_name: str) -> str | None:
        """The cube's first time dimension, else the first one reachable through many_to_one/one_to_one joins,
        for a cube no other cube refers to (a fact: an invoice line is dated by its invoice). A cube others
        refer to describes things (customers), and a date of what it refers to (its support rep's birth
        date) dates nothing of its rows: None."""
        own = self.cubes[cube_name]
        if not own.time_dimensions and self.referrers(cube_name):
            return None
        seen, queue = {cube_name}, deque([cube_name])
        while queue:
            cube = self.cubes[queue.popleft()]
            if cube.time_dimensions:
                return cube.time_dimensions[0].path
            for join in cube.joins:
                if join.relationship in ("many_to_one", "one_to_one") and join.target not in seen:
                    seen.add(join.target)
                    queue.append(join.target)
        return None
