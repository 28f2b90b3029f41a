"""The built-in compiler's ordering phase: the query's order, or Cube's default order (the first time
dimension with a granularity, else the first measure descending, else the first dimension)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from cube_models._compile.sql import (
    Column,
)

if TYPE_CHECKING:
    from cube_models._compile.state import CompilerState


class OrderingPhase:
    """ORDER BY of a query (mixed into ``cube_models.compiler._Compiler``)."""

    def _order(self: CompilerState, columns: list[Column]) -> list[exp.Ordered]:
        q = self.q
        items: list[tuple[str, bool]] = [(m, d == "desc") for m, d in q.order]
        if not q.order_given:
            granular = next((td for td, _ in self.tds if td.granularity), None)
            if granular is not None:
                items = [(granular.dimension, False)]
            elif self.measures and self.dims:
                items = [(self.measures[0][0], True)]
            elif self.dims:
                items = [(self.dims[0][0], False)]
        dims = [c for c in columns if c.kind != "measure"]
        out = []
        for member, desc in items:
            index = next(
                (
                    i
                    for i, c in enumerate(columns)
                    if (c.kind == "dimension" and c.key == member)
                    or (
                        c.kind == "time"
                        and (c.extra_key == member or c.key == member or c.key.rsplit(".", 1)[0] == member)
                    )
                ),
                None,
            )
            if index is None:
                index = next((len(dims) + i for i, (p, _) in enumerate(self.measures) if p == member), None)
            if index is not None:
                out.append(exp.Ordered(this=exp.Literal.number(index + 1), desc=desc, nulls_first=desc))
        return out
