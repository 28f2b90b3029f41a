"""Query validation for guardrails: what is wrong with a Cube query against a model, with suggestions.

``validate(query, model, today=None)`` -> ``list[Problem]`` (empty = valid): malformed query, unknown
member, a measure used as a dimension (or the reverse), a time dimension that is not of type time,
an unparsable dateRange, a limit over the cap, members that cannot be joined. Suggestions are the
closest member names by edit distance and by embedding similarity.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import numpy as np

from cube_models import _joins
from cube_models.dates import resolve_date_range
from cube_models.errors import CubeModelsError
from cube_models.model import Dimension, Measure, Member, Segment, SemanticModel
from cube_models.query import CubeQuery, Filter, FilterGroup
from cubesage_core.embeddings import Embedder, get_embedder
from cubesage_core.settings import Settings, get_settings


@dataclass
class Problem:
    code: str  # malformed | unknown_member | wrong_kind | not_time_dimension | bad_date_range | limit_over_cap
    #            | no_join_path | order_not_selected
    message: str
    member: str | None = None
    suggestions: list[str] = field(default_factory=list)

    @property
    def suggestion(self) -> str | None:
        return self.suggestions[0] if self.suggestions else None

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "member": self.member, "suggestions": self.suggestions}

    def __str__(self) -> str:
        hint = f" (did you mean {', '.join(self.suggestions[:3])}?)" if self.suggestions else ""
        return f"{self.message}{hint}"


_KIND = {"measure": Measure, "dimension": Dimension, "segment": Segment}
_EMB_CACHE: dict[tuple[int, int], tuple[list[str], np.ndarray]] = {}


def _candidates(model: SemanticModel, kind: str, time_only: bool = False) -> list[str]:
    cls = _KIND[kind]
    out = [
        m.path
        for c in model.cubes.values()
        for m in c.members()
        if isinstance(m, cls) and (not time_only or getattr(m, "type", "") == "time")
    ]
    for view in model.views.values():
        out += [f"{view.name}.{n}" for n, p in view.members.items() if isinstance(model.find_member(p), cls)]
    return out


def _member_text(model: SemanticModel, path: str) -> str:
    member = model.member(path)
    return " ".join(p for p in (member.title, path.replace("_", " ").replace(".", " "), member.description) if p)


def suggest_members(
    name: str, model: SemanticModel, kind: str, embedder: Embedder | None = None, n: int = 3, time_only: bool = False
) -> list[str]:
    """Closest member names of ``kind``: edit distance first, then embedding neighbours (when an embedder is
    given), de-duplicated."""
    pool = _candidates(model, kind, time_only)
    if not pool:
        return []
    lowered = {p.lower(): p for p in pool}
    out = [lowered[m] for m in difflib.get_close_matches(name.lower(), list(lowered), n=n, cutoff=0.6)]
    short = name.split(".")[-1].lower()
    out += [p for p in pool if p.split(".")[-1].lower() == short]
    if embedder is not None:
        key = (id(model), id(embedder))
        cached = _EMB_CACHE.get(key)
        if cached is None:
            all_paths = model.member_paths()
            cached = (all_paths, embedder.embed([_member_text(model, p) for p in all_paths]))
            _EMB_CACHE[key] = cached
        paths, matrix = cached
        query = embedder.embed_one(name.replace("_", " ").replace(".", " "))
        for i in np.argsort(-(matrix @ query)):
            if paths[i] in pool:
                out.append(paths[i])
            if len(dict.fromkeys(out)) >= n * 2:
                break
    return list(dict.fromkeys(out))[: n * 2]


def validate(
    query: CubeQuery | dict[str, Any] | str,
    model: SemanticModel,
    today: date | None = None,
    row_cap: int | None = None,
    embedder: Embedder | None = None,
) -> list[Problem]:
    """Every problem of ``query`` against ``model`` (empty list = the query compiles). Suggestions use
    ``embedder`` (default: the configured one, loaded only when a member is wrong)."""
    try:
        q = CubeQuery.parse(query)
    except CubeModelsError as exc:
        return [Problem("malformed", str(exc))]
    settings = get_settings()
    checker = _Checker(
        model,
        settings,
        today,
        row_cap if row_cap is not None else settings.query_row_cap,
        [embedder] if embedder is not None else [],
    )
    for check in _CHECKS:
        check(checker, q)
    if not checker.problems:
        checker.joins(q)
    return checker.problems


@dataclass
class _Checker:
    """The checks of one query; each adds its problems to ``problems``."""

    model: SemanticModel
    settings: Settings
    today: date | None
    row_cap: int
    lazy: list[Embedder]  # the embedder, loaded only when a suggestion is needed
    problems: list[Problem] = field(default_factory=list)

    def hint(self, path: str, kind: str, time_only: bool = False) -> list[str]:
        if not self.lazy:
            self.lazy.append(get_embedder(self.settings.embedding_backend))
        return suggest_members(path, self.model, kind, self.lazy[0], time_only=time_only)

    def member(self, path: str, kind: str, where: str, time_only: bool = False) -> Member | None:
        """The member at ``path`` if it is of ``kind`` (filters may name measures too), else a problem."""
        member = self.model.find_member(path)
        if member is None:
            self.problems.append(
                Problem("unknown_member", f"{where}: unknown member '{path}'", path, self.hint(path, kind, time_only))
            )
            return None
        if not isinstance(member, _KIND[kind]) and not (
            kind == "dimension" and where == "filters" and isinstance(member, Measure)
        ):
            self.problems.append(
                Problem(
                    "wrong_kind",
                    f"{where}: '{path}' is a {member.kind}, not a {kind}",
                    path,
                    self.hint(path, kind, time_only),
                )
            )
            return None
        return member

    def members(self, q: CubeQuery) -> None:
        for m in q.measures:
            self.member(m, "measure", "measures")
        for d in q.dimensions:
            self.member(d, "dimension", "dimensions")
        for s in q.segments:
            self.member(s, "segment", "segments")

    def time_dimensions(self, q: CubeQuery) -> None:
        for td in q.time_dimensions:
            dim = self.member(td.dimension, "dimension", "timeDimensions", time_only=True)
            if isinstance(dim, Dimension) and dim.type != "time":
                self.problems.append(
                    Problem(
                        "not_time_dimension",
                        f"timeDimensions: '{td.dimension}' is a {dim.type} dimension, not a time one",
                        td.dimension,
                        self.hint(td.dimension, "dimension", True),
                    )
                )
            if td.date_range is not None:
                try:
                    resolve_date_range(td.date_range, self.today)
                except CubeModelsError as exc:
                    self.problems.append(
                        Problem("bad_date_range", f"timeDimensions {td.dimension}: {exc}", td.dimension)
                    )

    def filters(self, q: CubeQuery) -> None:
        for f in q.filters:
            self._filter(f)

    def _filter(self, f: Filter | FilterGroup) -> None:
        if isinstance(f, FilterGroup):
            for item in f.items:
                self._filter(item)
            return
        member = self.member(f.member, "dimension", "filters")
        if isinstance(member, Dimension) and f.operator.endswith(("DateRange", "Date")) and member.type != "time":
            self.problems.append(
                Problem(
                    "not_time_dimension",
                    f"filters: {f.operator} needs a time dimension, '{f.member}' is {member.type}",
                    f.member,
                )
            )

    def limit(self, q: CubeQuery) -> None:
        if q.limit is not None and q.limit > self.row_cap:
            self.problems.append(
                Problem(
                    "limit_over_cap",
                    f"limit {q.limit} is over the row cap of {self.row_cap}",
                    None,
                    [str(self.row_cap)],
                )
            )

    def order(self, q: CubeQuery) -> None:
        selected = {
            *q.measures,
            *q.dimensions,
            *(t.dimension for t in q.time_dimensions if t.granularity),
            *(f"{t.dimension}.{t.granularity}" for t in q.time_dimensions if t.granularity),
        }
        for member, _ in q.order:
            if member not in selected:
                self.problems.append(
                    Problem("order_not_selected", f"order: '{member}' is not selected, so Cube ignores it", member)
                )

    def joins(self, q: CubeQuery) -> None:
        """Run last, on a query without other problems: its cubes must be joinable."""
        cubes: list[_joins.Hint] = [self.model.member(self.model.resolve_path(p)).cube for p in q.members()]
        try:
            _joins.build_join_tree(self.model, cubes)
        except CubeModelsError as exc:
            self.problems.append(Problem("no_join_path", str(exc)))


_CHECKS: tuple[Callable[[_Checker, CubeQuery], None], ...] = (
    _Checker.members,
    _Checker.time_dimensions,
    _Checker.filters,
    _Checker.limit,
    _Checker.order,
)
