"""Pass: members compared ("video vs audio", "premium versus basic accounts", "比较线上和线下"): two or
more segments of one cube named with a comparison word are not applied together (no row is in both) but
compared: one query per segment, labelled by its title."""

from __future__ import annotations

from router.parse.context import Knowledge, Question


def choose(q: Question, k: Knowledge) -> None:
    r = q.reading
    if r.intent != "aggregate" or len(r.segments) < 2 or not r.marks_of("compare", "which", "group"):
        return
    by_cube: dict[str, list[str]] = {}
    for path in r.segments:
        by_cube.setdefault(path.split(".", 1)[0], []).append(path)
    compared = next((paths for paths in by_cube.values() if len(paths) > 1), None)
    if compared is None:
        return
    r.segments = [s for s in r.segments if s not in compared]
    r.compared_segments = compared
    r.notes.append("compared segments: " + ", ".join(compared))
