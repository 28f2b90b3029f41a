"""Pass: members compared ("video vs audio", "premium versus basic accounts", "比较线上和线下"): two or
more segments of one cube named with a comparison word are not applied together (no row is in both) but
compared: one query per segment, labelled by its title; so are segments said of "each" (各自). Segments that
each test one column for one value ("{CUBE}.lg = 'AL'") group by that column instead, kept to those values: the
rows are labelled as the data has them (AL, NL) under the column's title."""

from __future__ import annotations

from router.aggregate.drill import column_values
from router.parse.context import Knowledge, Question
from router.parse.reading import Filter

_EACH_ZH = "各自"  # "each of them" (no group word: 各 before 自 groups nothing)


def choose(q: Question, k: Knowledge) -> None:
    r = q.reading
    each = r.marks_of("compare", "which", "group") or _EACH_ZH in r.text  # "美联和国联各自": one row each
    if r.intent != "aggregate" or len(r.segments) < 2 or not each:
        return
    by_cube: dict[str, list[str]] = {}
    for path in r.segments:
        by_cube.setdefault(path.split(".", 1)[0], []).append(path)
    compared = next((paths for paths in by_cube.values() if len(paths) > 1), None)
    if compared is None:
        return
    r.segments = [s for s in r.segments if s not in compared]
    grouped = _one_column(k, compared)
    if grouped is not None:
        dimension, values = grouped
        r.dimensions.append(dimension)
        r.filters.append(Filter(dimension, "equals", values, "compared segments"))
        r.notes.append(f"compared segments {', '.join(compared)}: grouped by {dimension}, one row per value")
        return
    r.compared_segments = compared
    r.notes.append("compared segments: " + ", ".join(compared))


def _one_column(k: Knowledge, segments: list[str]) -> tuple[str, list[str]] | None:
    """(the dimension, the values) when every segment is "<that column> = '<one value>'"."""
    found = [
        column_values(k.model.cubes[path.split(".", 1)[0]], str(k.model.find_member(path).sql)) for path in segments
    ]
    tested = [f for f in found if f is not None and len(f[1]) == 1]  # a segment of several values is one row
    if len(tested) != len(segments) or len({dimension for dimension, _ in tested}) != 1:
        return None
    return tested[0][0], [values[0] for _, values in tested]
