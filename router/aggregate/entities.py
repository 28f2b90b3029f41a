"""Rows an aggregate question names ("turnover of the Acme T9 drill", "Jane Doe's total spend") as filters.

An entity row (``router.detail.entities.EntityMatch``: physical table, key column, key value, label) is
mapped to the cube whose physical table (``sql_table``, or the base table of its single-table ``sql``) is
that table: a name dimension (``name``, ``name_<language>``, ``*_name``) filtered to the label when the cube has
one, else the key dimension filtered to the key.
Cubes the question already filters by a glossary value ("德国" -> countries.country_code) are left alone.
"""

from __future__ import annotations

import re
from typing import Any

from cube_models.model import SemanticModel
from cube_models.physical import Physical, physical_table

NAME_DIMENSION = re.compile(r"^name(_[a-z]{2})?$|_name$", re.IGNORECASE)


def entity_filters(entities: list[Any], model: SemanticModel, bound_cubes: set[str]) -> list[dict[str, Any]]:
    """One ``equals`` filter per named cube (several rows of a cube: any of them)."""
    values: dict[str, list[str]] = {}
    for entity in entities:
        table = str(entity.table).rsplit(".", 1)[-1]
        found = next(((c, p) for c in model.cubes.values() if (p := physical_table(c, "")) and p.table == table), None)
        if found is None or found[0].name in bound_cubes:
            continue
        member, value = _member(*found, entity)
        if member and value not in values.setdefault(member, []):
            values[member].append(value)
    return [{"member": m, "operator": "equals", "values": v} for m, v in values.items() if v]


def _member(cube: Any, phys: Physical, entity: Any) -> tuple[str | None, str]:
    for dim in cube.dimensions.values():
        if dim.type == "string" and NAME_DIMENSION.search(dim.name):
            return f"{cube.name}.{dim.name}", str(entity.label)
    key = next((name for name, column in phys.columns.items() if column == entity.key_column), None)
    return (f"{cube.name}.{key}", str(entity.key_value)) if key else (None, "")
