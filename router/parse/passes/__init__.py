"""The parser's passes, in order; each reads and extends the question's :class:`~router.parse.Reading`
(sqlglot-optimizer style: one rule per module, a tuple of rules)."""

from __future__ import annotations

from collections.abc import Callable

from router.parse.context import Knowledge, Question
from router.parse.passes import (
    compared,
    coverage,
    filters,
    groups,
    keys,
    listing,
    literals,
    measures,
    members,
    order,
    per,
    share,
    shown,
    spans,
    tail,
    time,
    translate,
    units,
    years,
)

Pass = Callable[[Question, Knowledge], None]

PASSES: tuple[tuple[str, Pass], ...] = (
    ("spans", spans.collect),
    ("literals", literals.choose),
    ("translate", translate.choose),
    ("tail", tail.choose),
    ("keys", keys.choose),
    ("measures", measures.choose),
    ("per", per.choose),
    ("units", units.choose),
    ("listing", listing.head),
    ("groups", groups.choose),
    ("filters", filters.choose),
    ("compared", compared.choose),
    ("share", share.choose),
    ("members", members.choose),
    ("years", years.choose),
    ("time", time.choose),
    ("order", order.choose),
    ("shown", shown.choose),
    ("columns", listing.columns),
    ("coverage", coverage.check),
)
