"""Fast (deterministic) slot filling: understanding + retrieval context -> Cube query draft, as passes.

Each pass (sqlglot-optimizer style: a tuple of named passes, as ``router.parse.passes``) reads and fills the
question's :class:`~router.aggregate.slots.base.Slots`, in order:

- ``measures``: metric bindings in order (``metric:invoices.net_total`` -> ``invoices.net_total``); without any,
  a measure the question names, the count it asks ("how many invoices"/"多少张发票", or "daily invoices": a
  grain, ranking, comparison or group-by counts the bound table, ``members.row_count``), the best retrieved
  metric asset, then the measures of a cached few-shot query; "average ..." -> the average twin of a sum;
- ``guessed``: a measure the question does not name answers only a question whose every word binds;
- ``values``: value bindings (``德国`` -> ``countries.country_code`` = ``DE``);
- ``mentioned``, ``bound``, ``ranked``, ``compared``: dimensions: group-by mentions resolved against the model
  (``members.resolve_dimension``), dimension bindings without a value when the question has a group-by cue
  (by/per/which/top/按/各/哪/最), the rows a ranking lists, and two or more bound values of one member in a
  comparison ("compare 德国 and 法国") group by that member;
- ``share``: "share"/"占比" adds a post-query share of the total; with a value filter and no group-by
  ("share of turnover from the app channel") the filtered member becomes the group-by so every share is shown;
- ``filters``: the bound values and entity filters from the pipeline (values passed as values only), segment
  bindings ("paid invoices" -> ``invoices.paid``);
- ``count_bound``: "customers with more than 5 orders" -> a bound on the count per group;
- ``queries``: each range -> ``timeDimensions`` with ``dateRange`` on ``model.time_dimension_for(measure)``;
  granularity from "by month"/"按月"/"trend"; YoY/PoP/versus comparisons -> one query per range; top-N ->
  measure desc + limit (and a ``set`` filter on the measure, so groups without a value cannot take the top
  places); "lowest" -> asc; a time series is ordered by time.
"""

from __future__ import annotations

from cube_models.model import SemanticModel
from router.aggregate.context import AggregateContext, ContextLike
from router.aggregate.slots import counts, dimensions, filters, measures, queries
from router.aggregate.slots.base import METRIC_ASSET_TYPES, SlotPass, Slots
from router.aggregate.types import AggregateError, CubeQueryDraft
from router.understanding.negation import negation, refusal
from router.understanding.types import Understanding

PASSES: tuple[tuple[str, SlotPass], ...] = (
    ("measures", measures.choose),
    ("guessed", measures.guessed),
    ("values", filters.values),
    ("mentioned", dimensions.mentioned),
    ("bound", dimensions.bound),
    ("ranked", dimensions.ranked),
    ("compared", dimensions.compared),
    ("share", filters.share),
    ("filters", filters.choose),
    ("count_bound", counts.bound),
    ("queries", queries.build),
)


def fill_slots(u: Understanding, context: ContextLike, model: SemanticModel) -> CubeQueryDraft:
    """The Cube queries of an aggregate question, filled pass by pass (see the module docstring)."""
    if phrase := negation(u.normalized):
        raise AggregateError(refusal(phrase))
    slots = Slots(u, AggregateContext.of(context), model)
    for _, fill in PASSES:
        fill(slots)
    return slots.draft()


__all__ = ["METRIC_ASSET_TYPES", "PASSES", "SlotPass", "Slots", "fill_slots"]
