"""Pass: members compared ("video vs audio", "premium versus basic accounts", "比较线上和线下"): two or
more segments of one cube named with a comparison word are not applied together (no row is in both) but
compared: one query per segment, labelled by its title; so are segments said of "each" (各自)."""

from __future__ import annotations

from router.parse.context import Knowledge, Question

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
    r.compared_segments = compared
    r.notes.append("compared segments: " + ", ".join(compared))
