"""Names that nest: a value two dimensions hold where one cube's rows belong to the other's ("Chicago Cubs", a
team season's name and its franchise's name), asked of the warehouse.

``Nesting.within(child, values, parent, parents)`` is true when every row of the child dimension's cube
named by ``values`` belongs (through the model's own many-to-one join) to a row of the parent dimension's
cube named by ``parents``: the two readings name the same rows wherever the parent's rows all carry the name,
and the child's reading is the literal one (the rows that carry the name themselves). A person who is both
a customer and that customer's sales rep is not nested: the customer's rep has another name.

One compiled Cube query (the parent's names of the child's rows, one more than ``parents`` at most), read-only,
bounded by the probe's ``TIMEOUT_MS`` (``probe.read_only``); any failure reads as "not nested", so the caller
asks instead. ``nested_child`` is the choice the parser makes with it: of two cubes' names (each its cube's
label) tied for one word, the child's.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import psycopg

from cube_models.compiler import compile_query
from cube_models.errors import CubeModelsError
from cubesage_core.lru import Lru
from router.parse import facts
from router.parse.probe import read_only

ANSWERS_KEPT = 256  # answers kept for the layer's lifetime (a refresh builds a new layer)


@dataclass
class Nesting:
    url: str
    model: Any
    answers: Lru[bool] = field(default_factory=lambda: Lru(ANSWERS_KEPT))

    def within(self, child: str, values: list[str], parent: str, parents: list[str]) -> bool:
        """Every row ``child`` in ``values`` names belongs to a row ``parent`` in ``parents`` names (and one
        such row exists)."""
        key = (child, tuple(values), parent, tuple(parents))
        known = self.answers.get(key)
        if known is None:
            known = self._asked(child, values, parent, parents)
            self.answers.put(key, known)
        return known

    def _asked(self, child: str, values: list[str], parent: str, parents: list[str]) -> bool:
        query = {
            "dimensions": [parent],
            "filters": [{"member": child, "operator": "equals", "values": list(values)}],
            "limit": len(parents) + 1,
        }
        try:
            compiled = compile_query(query, self.model)
            with psycopg.connect(self.url, autocommit=True, cursor_factory=psycopg.RawCursor) as conn:
                found = {row[0] for row in read_only(conn, compiled.sql, compiled.params)}
        except (CubeModelsError, psycopg.Error):
            return False
        return bool(found) and found <= set(parents)


Nests = Callable[[str, list[str], str, list[str]], bool]


def nested_child(model: Any, nests: Nests | None, values: dict[str, list[str]], language: str = "en") -> str | None:
    """The child's member, when ``values`` (member -> the values a word names) are two cubes' labels, one cube
    joins the other many to one, and ``nests`` says the child's rows so named all belong to parent rows so
    named; else None."""
    cubes = {path.split(".", 1)[0]: path for path in values}
    if nests is None or len(values) != 2 or len(cubes) != 2:
        return None
    if any(facts.label(model, cube, language) != path for cube, path in cubes.items()):
        return None  # a country of a customer and of an invoice: the question's words choose, or the reply asks
    for child, parent in itertools.permutations(cubes):
        join = next((j for j in model.cubes[child].joins if j.target == parent), None)
        many_to_one = join is not None and join.relationship == "many_to_one"
        if many_to_one and nests(cubes[child], values[cubes[child]], cubes[parent], values[cubes[parent]]):
            return cubes[child]
    return None
