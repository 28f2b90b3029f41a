"""Query validation for guardrails: what is wrong with a Cube query against a model, with suggestions.

``validate(query, model, today=None)`` -> ``list[Problem]`` (empty = valid): malformed query, unknown
member, a measure used as a dimension (or the reverse), a time dimension that is not of type time,
an unparsable dateRange, a limit over the cap, members that cannot be joined. Suggestions are the
closest member names by edit distance and by embedding similarity.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import numpy as np

from cube_models import _joins
from cube_models.dates import resolve_date_range
from cube_models.errors import CubeModelsError
from cube_models.model import Dimension, Measure, Segment, SemanticModel
from cube_models.query import CubeQuery, Filter, FilterGroup
from cubesage_core.embeddings import Embedder


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
    out = [m.path for c in model.cubes.values() for m in c.members()
           if isinstance(m, cls) and (not time_only or getattr(m, "type", "") == "time")]
    for view in model.views.values():
        out += [f"{view.name}.{n}" for n, p in view.members.items()
                if isinstance(model.find_member(p), cls)]
    return out


def _member_text(model: SemanticModel, path: str) -> str:
    member = model.member(path)
    return " ".join(p for p in (member.title, path.replace("_", " ").replace(".", " "), member.description) if p)


def suggest_members(name: str, model: SemanticModel, kind: str, embedder: Embedder | None = None, n: int = 3,
            time_only: bool = False) -> list[str]:
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


def validate(query: CubeQuery | dict[str, Any] | str, model: SemanticModel, today: date | None = None,
             row_cap: int | None = None, embedder: Embedder | None = None) -> list[Problem]:
    """Every problem of ``query`` against ``model`` (empty list = the query compiles). Suggestions use
    ``embedder`` (default: the configured one, loaded only when a member is wrong)."""
    try:
        q = CubeQuery.parse(query)
    except CubeModelsError as exc:
        return [Problem("malformed", str(exc))]
    from cubesage_core.settings import get_settings

    settings = get_settings()
    if row_cap is None:
        row_cap = settings.query_row_cap
    problems: list[Problem] = []
    lazy: list[Embedder] = [embedder] if embedder is not None else []

    def hint(path: str, kind: str, time_only: bool = False) -> list[str]:
        if not lazy:  # the embedder is loaded only when a suggestion is needed
            from cubesage_core.embeddings import get_embedder

            lazy.append(get_embedder(settings.embedding_backend))
        return suggest_members(path, model, kind, lazy[0], time_only=time_only)

    def check(path: str, kind: str, where: str, time_only: bool = False) -> Any:
        member = model.find_member(path)
        if member is None:
            problems.append(Problem("unknown_member", f"{where}: unknown member '{path}'", path,
                                    hint(path, kind, time_only)))
            return None
        if not isinstance(member, _KIND[kind]) and not (kind == "dimension" and where == "filters"
                                                        and isinstance(member, Measure)):
            problems.append(Problem("wrong_kind", f"{where}: '{path}' is a {member.kind}, not a {kind}", path,
                                    hint(path, kind, time_only)))
            return None
        return member

    for m in q.measures:
        check(m, "measure", "measures")
    for d in q.dimensions:
        check(d, "dimension", "dimensions")
    for s in q.segments:
        check(s, "segment", "segments")
    for td in q.time_dimensions:
        dim = check(td.dimension, "dimension", "timeDimensions", time_only=True)
        if isinstance(dim, Dimension) and dim.type != "time":
            problems.append(Problem("not_time_dimension",
                                    f"timeDimensions: '{td.dimension}' is a {dim.type} dimension, not a time one",
                                    td.dimension, hint(td.dimension, "dimension", True)))
        if td.date_range is not None:
            try:
                resolve_date_range(td.date_range, today)
            except CubeModelsError as exc:
                problems.append(Problem("bad_date_range", f"timeDimensions {td.dimension}: {exc}", td.dimension))

    def walk(f: Filter | FilterGroup) -> None:
        if isinstance(f, FilterGroup):
            for item in f.items:
                walk(item)
            return
        member = check(f.member, "dimension", "filters")
        if isinstance(member, Dimension) and f.operator.endswith(("DateRange", "Date")) and member.type != "time":
            problems.append(Problem("not_time_dimension",
                                    f"filters: {f.operator} needs a time dimension, '{f.member}' is {member.type}",
                                    f.member))

    for f in q.filters:
        walk(f)
    limit = q.limit
    if limit is not None and limit > row_cap:
        problems.append(Problem("limit_over_cap", f"limit {limit} is over the row cap of {row_cap}", None,
                                [str(row_cap)]))
    selected = {*q.measures, *q.dimensions, *(t.dimension for t in q.time_dimensions if t.granularity),
                *(f"{t.dimension}.{t.granularity}" for t in q.time_dimensions if t.granularity)}
    for member, _ in q.order:
        if member not in selected:
            problems.append(Problem("order_not_selected",
                                    f"order: '{member}' is not selected, so Cube ignores it", member))
    if not problems:
        cubes: list[_joins.Hint] = [model.member(model.resolve_path(p)).cube for p in q.members()]
        try:
            _joins.build_join_tree(model, cubes)
        except CubeModelsError as exc:
            problems.append(Problem("no_join_path", str(exc)))
    return problems
