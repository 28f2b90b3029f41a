"""Rows the pipeline recognised in a question (``router.detail.entities.EntityMatch``: a physical table,
key column and value, and the label that named it) as value targets of the parser: the cube's label
dimension equal to the name (so answers show the name), or its key dimension equal to the row's key when
the label is no plain column of the table."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from cube_models.physical import physical_table
from router.parse import facts
from router.parse.reading import Target


class Row(Protocol):
    """What the parser reads of a recognised row (read-only, so frozen dataclasses fit)."""

    @property
    def table(self) -> str: ...
    @property
    def key_column(self) -> str: ...
    @property
    def key_value(self) -> Any: ...
    @property
    def label(self) -> str: ...


def row_targets(rows: Iterable[Row], model: Any) -> list[tuple[str, Target]]:
    """(label, target) per row whose table a cube of ``model`` is over."""
    tables: dict[str, tuple[str, dict[str, str]]] = {}
    for cube in model.cubes.values():
        found = physical_table(cube, "")
        if found is not None:
            tables.setdefault(found.table, (cube.name, found.columns))
    out = []
    for row in rows:
        cube_columns = tables.get(str(row.table).rsplit(".", 1)[-1])
        if cube_columns is None:
            continue
        cube, columns = cube_columns
        label = facts.label(model, cube)
        key = next((name for name, column in columns.items() if column == row.key_column), None)
        if label is not None and columns.get(label.split(".", 1)[1]) is not None:
            out.append((str(row.label), Target("value", label, str(row.label), "rows")))  # shown by its name
        elif key is not None:
            out.append((str(row.label), Target("value", f"{cube}.{key}", str(row.key_value), "rows")))
    return out
