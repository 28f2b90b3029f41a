"""The rows behind a mixed question's aggregate: the listing is restricted as the aggregate is (its groups'
values, its filters, segments and period, the rows a filtered count counts, the row holding a maximum), or
refused when it cannot be; never listed unfiltered. One step per function, run in order by
:func:`behind_aggregate`."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import TYPE_CHECKING, Any

from router.aggregate.drill import segments_holding, values_holding
from router.parse import facts
from router.parse.facts import joined
from router.parse.passes.listing import ROW_VALUED
from router.parse.reading import Filter, Reading
from router.tables import ResultTable
from router.understanding._calendar import period_end

if TYPE_CHECKING:
    from cube_models.model import SemanticModel

MIXED_ENTITIES = 20  # a mixed question looks up detail rows for the first aggregate rows only
Step = Callable[[Reading, ResultTable, dict[str, Any], Any], None]


def behind_aggregate(reading: Reading, table: ResultTable, cube_query: dict[str, Any], model: Any) -> None:
    """Restrict a mixed question's listing to the rows behind its aggregate (``STEPS`` in order)."""
    for step in STEPS:
        step(reading, table, cube_query, model)
        if reading.refusal:
            return


def _grouped_values(reading: Reading, table: ResultTable, cube_query: dict[str, Any], model: Any) -> None:
    """A mixed question's rows are those of the aggregate's groups: its first grouped column's values (the
    first ``MIXED_ENTITIES`` rows) filter the listing, and the listing shows that column. Groups without a
    value name no rows: the listing is refused rather than left unfiltered."""
    pinned = _pinned(cube_query, model)
    grouped = [c for c in _groups(cube_query, pinned) if c in table.columns]
    if (
        grouped
        and table.rows
        and all(row[table.columns.index(grouped[0])] is None for row in table.rows[:MIXED_ENTITIES])
    ):
        reading.refuse(f"the aggregate's {grouped[0]} has no value, so no rows can be listed behind it")
        return
    for i, column in enumerate(table.columns):
        if column.count(".") > 1 or column.split(".", 1)[0] in pinned:  # a period: dated rows; the one named
            continue  # row is filtered on already (``_aggregate_filters``)
        values = [str(row[i]) for row in table.rows[:MIXED_ENTITIES] if row[i] is not None]
        if values and all(isinstance(row[i], str) for row in table.rows[:MIXED_ENTITIES] if row[i] is not None):
            if reading.listing and not _through_bridge(reading, model, column.split(".", 1)[0]):
                reading.refuse(
                    f"the {reading.listing} rows cannot be restricted to the aggregate's {column}: "
                    "the model joins them no way"
                )
                return
            reading.filters.append(Filter(column, "equals", list(dict.fromkeys(values)), "the aggregate's rows"))
            reading.columns = list(dict.fromkeys([*reading.columns, column]))
            return


def _pinned(cube_query: dict[str, Any], model: Any) -> set[str]:
    """The cubes whose one row the aggregate is filtered to by its key or name ("Ted Williams' batting
    average": people), whose key and name it shows (``router.parse.cube``): those columns restrict nothing
    more."""
    out = set()
    for f in cube_query.get("filters") or []:
        member = str(f.get("member", ""))
        cube = member.split(".", 1)[0]
        if f.get("operator") != "equals" or len(f.get("values") or []) != 1 or cube not in model.cubes:
            continue
        if member == facts.primary_key(model, cube) or facts.names_rows(model, member):
            out.add(cube)
    return out


def _groups(cube_query: dict[str, Any], pinned: set[str]) -> list[str]:
    """The aggregate's dimensions that group it: not the key and name of the one row it is filtered to
    (``_pinned``)."""
    return [d for d in cube_query.get("dimensions") or [] if d.split(".", 1)[0] not in pinned]


def _grouped_period(reading: Reading, table: ResultTable, cube_query: dict[str, Any], model: Any) -> None:
    """ "our best month ever for sales, and what invoices made it up": an aggregate grouped by a period lists
    the rows of its period (one row: that period's dates); rows of several periods are refused, not merged."""
    for td in cube_query.get("timeDimensions") or []:
        grain, column = td.get("granularity"), f"{td.get('dimension')}.{td.get('granularity')}"
        if not grain or column not in table.columns or not table.rows:
            continue
        starts = {str(row[table.columns.index(column)])[:10] for row in table.rows[:MIXED_ENTITIES]}
        if len(starts) != 1 or reading.listing is None:
            reading.refuse(f"the rows of {len(starts)} {grain}s are listed one {grain} at a time: ask for one")
            return
        first = date.fromisoformat(starts.pop())
        last = period_end(first, grain)
        reading.filters.append(  # filtered on its dimension: ``_aggregate_filters`` adds no other period
            Filter(str(td["dimension"]), "inDateRange", [first.isoformat(), last.isoformat()], "the aggregate's period")
        )
        return


def _through_bridge(reading: Any, model: Any, cube: str) -> bool:
    """The listing reaches ``cube`` (a join either way), or a cube joining both does ("who supplies that part":
    the part-supplier rows): that cube's key joins the columns, so the query has a root reaching both."""
    if joined(model, reading.listing, cube):
        return True
    bridges = [c for c in model.cubes if {reading.listing, cube} <= set(facts.reach(model, c))]
    bridges.sort(
        key=lambda c: (facts.reach(model, c)[reading.listing] + facts.reach(model, c)[cube], len(facts.reach(model, c)))
    )  # the nearest, then the narrowest (no fact)
    keys = [d.path for d in model.cubes[bridges[0]].primary_keys] if bridges else []
    if keys:
        reading.columns = list(dict.fromkeys([*reading.columns, *keys]))
    return bool(keys)


def _listed_under(reading: Reading, model: Any, member: str) -> bool:
    """ "the Dodgers' total payroll, and their five highest-paid players": players belong to no team, so the
    rows listed become those of the one cube referring to both that holds a member the listing shows or orders
    by (salaries: one row per salary, naming its player); False when there is none such."""
    assert reading.listing is not None
    shown = {m.split(".", 1)[0] for m in [*reading.columns, *(member for member, _ in reading.order)]}
    under = facts.rows_under(model, reading.listing, [{member.split(".", 1)[0]}], shown)
    if under is None:
        return False
    keys = [d.path for d in model.cubes[under].primary_keys]
    up = set(facts.referred(model, under))  # columns of rows the new ones do not refer to would repeat them
    reading.columns = list(dict.fromkeys([*keys, *(c for c in reading.columns if c.split(".", 1)[0] in up)]))
    reading.notes.append(f"rows of {under}: each names its {reading.listing} and the aggregate's {member}")
    reading.listing = under
    return True


def _aggregate_filters(reading: Reading, table: ResultTable, cube_query: dict[str, Any], model: Any) -> None:
    """The rows behind an aggregate are restricted as it is: its filters on dimensions and its segments the
    listing does not restate ("the average supply cost for part 2500, and the suppliers of it": part 2500)."""
    if reading.listing is None:
        return
    measures = set(cube_query.get("measures") or [])
    said = {f.member for f in reading.filters}
    for f in cube_query.get("filters") or []:  # "set" on a measure only drops groups without a value
        bound = str(f.get("member", "")) in measures and f.get("operator") not in ("set", "notSet")
        if bound and not _bound_rows(reading, table, cube_query, model, f):
            return
    for f in cube_query.get("filters") or []:
        member = str(f.get("member", ""))
        if member in measures or member in said or f.get("operator") in ("set", "notSet") or "." not in member:
            continue
        if not joined(model, reading.listing, member.split(".", 1)[0]) and not _listed_under(reading, model, member):
            reading.refuse(
                f"the {reading.listing} rows cannot be restricted to the aggregate's {member}: "
                "the model joins them no way"
            )
            return
        reading.filters.append(
            Filter(member, f["operator"], [str(v) for v in f.get("values") or []], "the aggregate's filters")
        )
    for segment in cube_query.get("segments") or []:
        if segment not in reading.segments and joined(model, reading.listing, segment.split(".", 1)[0]):
            reading.segments.append(segment)
    if model.cube_time_dimension(reading.listing):  # rows with dates of their own are dated as the question says
        return
    for td in cube_query.get("timeDimensions") or []:  # undated rows: those of the aggregate's period
        span = td.get("dateRange")
        if (
            isinstance(span, list)
            and not reading.time_spans
            and td["dimension"] not in said
            and joined(model, reading.listing, td["dimension"].split(".", 1)[0])
        ):
            reading.filters.append(
                Filter(td["dimension"], "inDateRange", [str(v) for v in span], "the aggregate's period")
            )


def _bound_rows(
    reading: Reading, table: ResultTable, cube_query: dict[str, Any], model: Any, f: dict[str, Any]
) -> bool:
    """ "how many orders had a total over 350,000, and list them": a bound on a measure of the listed cube over
    its own column, grouped by that cube's rows, bounds that column of each row (a ratio with no column, each
    row's own value of it, shown); a bound the listing cannot say is refused unless the aggregate's groups
    (shown) restrict the rows (:func:`_grouped_values`)."""
    measure = model.find_member(str(f.get("member", "")))
    column = _column_dimension(model, measure.path) if measure is not None else None
    key = facts.primary_key(model, reading.listing or "")
    own = measure is not None and measure.cube == reading.listing and measure.type in ("sum", "max", "min", "avg")
    values = [str(v) for v in f.get("values") or []]
    grouped_by_row = key in (cube_query.get("dimensions") or [])
    if own and column and grouped_by_row:
        reading.filters.append(Filter(column, f["operator"], values, "the bound"))
        return True
    if measure is not None and measure.cube == reading.listing and grouped_by_row and measure.type in ROW_VALUED:
        reading.row_measures.append(measure.path)  # "win percentage over 50%": each row's own ratio, bounded
        reading.filters.append(Filter(measure.path, f["operator"], values, "the bound"))
        return True
    if any(c in table.columns for c in cube_query.get("dimensions") or []):
        return True
    reading.refuse(
        f"the {reading.listing} rows cannot be restricted to the aggregate's bound on {f.get('member')}: "
        "ask for the groups that pass it"
    )
    return False


BEHIND_EXTREME = (
    "the rows behind a maximum or minimum are not listed: ask for the top row itself "
    "(e.g. 'the largest ... with its ...')"
)


def extreme_only(cube_query: dict[str, Any], model: Any) -> bool:
    """The aggregate is one maximum or minimum, grouped by nothing."""
    measures = [model.find_member(m) for m in cube_query.get("measures") or []]
    return (
        bool(measures)
        and not _groups(cube_query, _pinned(cube_query, model))
        and all(getattr(m, "type", "") in ("max", "min") for m in measures)
    )


def _behind_extreme(reading: Reading, table: ResultTable, cube_query: dict[str, Any], model: Any) -> None:
    """The rows behind one maximum or minimum ("the single largest order in 1997, and who placed it") are
    those where its column holds that value: the listing is filtered on the dimension over the same column.
    Refused, rather than listed unfiltered, when no dimension holds the column or the listing cannot reach it."""
    if not extreme_only(cube_query, model):
        return
    measure = cube_query["measures"][0]
    value = table.rows[0][table.columns.index(measure)] if measure in table.columns and len(table.rows) == 1 else None
    dimension = _column_dimension(model, measure)
    if (
        value is None
        or dimension is None
        or reading.listing is None
        or not joined(model, reading.listing, dimension.split(".", 1)[0])
    ):
        reading.refuse(BEHIND_EXTREME)
        return
    reading.filters.append(Filter(dimension, "equals", [str(value)], "the aggregate's extreme"))
    keys = [d.path for d in model.cubes[dimension.split(".", 1)[0]].primary_keys]  # which row holds it
    reading.columns = list(dict.fromkeys([*reading.columns, *keys[:1], dimension]))


def _column_dimension(model: SemanticModel, measure: str) -> str | None:
    """The public dimension of a measure's cube over the measure's own column (a max's value names its rows)."""
    found = model.find_member(measure)
    cube = model.cubes.get(measure.split(".", 1)[0])
    if found is None or cube is None:
        return None
    dims = [d for d in cube.dimensions.values() if d.public and facts.column(d) == facts.column(found)]
    return dims[0].path if dims else None


def _counted_rows(reading: Reading, table: ResultTable, cube_query: dict[str, Any], model: Any) -> None:
    """ "the supplier with the most late line items, and which lines were they", "tracks sold (of paid
    invoices), plus the invoices that bought them": a measure whose ``filters`` pick the rows it counts or adds up
    lists only the rows behind them, through the segment with the same condition; refused when the model
    has no such segment (the rows would be listed without the condition)."""
    for path in cube_query.get("measures") or []:
        measure = model.find_member(path)
        if measure is None or not measure.filters or reading.listing is None:
            continue
        if measure.cube != reading.listing and (
            _groups(cube_query, _pinned(cube_query, model)) or not joined(model, reading.listing, measure.cube)
        ):
            continue  # the rows of groups ("top 5 ... and their refunds") are all theirs, not those it adds up
        found = segments_holding(model, measure)
        values = values_holding(model, measure) if found is None else []
        if found is None and values is None:
            title = measure.title or measure.name
            reading.refuse(
                f"the rows {title} counts are picked by its filter, which no segment of {measure.cube} holds: "
                "add that segment to the model to list them"
            )
            return
        reading.segments += [s for s in found or [] if s not in reading.segments]
        said = {(f.member, tuple(f.values)) for f in reading.filters}
        reading.filters += [
            Filter(member, "equals", kept, f"the rows {measure.title or measure.name} counts")
            for member, kept in values or []
            if (member, tuple(kept)) not in said
        ]


STEPS: tuple[Step, ...] = (_grouped_period, _grouped_values, _aggregate_filters, _counted_rows, _behind_extreme)
