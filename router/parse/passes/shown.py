"""Pass: rows told apart by their key (``Knowledge.keyed_labels``: things like players or customers, or names
rows share) are shown with it. Groups by their name group by the key too; the one row an aggregate question
names by its key or name ("Ted Williams' career batting average") is shown by its key and name
(``Reading.shown``, read by ``router.parse.cube``). The reader sees which row each is, and namesakes are not
added together. Last before the listing's columns: groups and filters are all known."""

from __future__ import annotations

from router.parse import facts
from router.parse.context import Knowledge, Question
from router.parse.reading import Reading


def choose(q: Question, k: Knowledge) -> None:
    r = q.reading
    if r.intent != "aggregate" or r.refusal:
        return
    _keyed_names(r, k)
    _named_row(r, k)


def _keyed_names(r: Reading, k: Knowledge) -> None:
    """Groups by a label rows can share (two playlists called "Music"), or by the name of things a reader
    tells apart by key (players, customers), are groups by the rows' key too, shown before the name:
    namesakes are not added together, and the reader sees which row each is."""
    for path in [d for d in r.dimensions if d in k.keyed_labels]:
        key = facts.primary_key(k.model, path.split(".", 1)[0])
        if key is not None and key not in r.dimensions:
            r.dimensions.insert(r.dimensions.index(path), key)
            r.notes.append(f"group by {key} too: the rows named by {path} are told apart by it")


def _named_row(r: Reading, k: Knowledge) -> None:
    """The key and name of each row an equals filter names by its key or keyed name, not already grouped by."""
    shown: list[str] = []
    for f in r.filters:
        cube = f.member.split(".", 1)[0]
        if f.operator != "equals" or len(f.values) != 1 or cube not in k.model.cubes:
            continue
        key, label = facts.primary_key(k.model, cube), facts.label(k.model, cube, r.language)
        if f.member == key and label in k.keyed_labels:  # the row found by its name, filtered on its key
            shown += [key, label]
        elif f.member in k.keyed_labels and key is not None:
            shown += [key, f.member]
    r.shown = [d for d in dict.fromkeys(shown) if d not in r.dimensions]
