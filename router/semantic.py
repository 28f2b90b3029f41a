"""The question paths that run on the current Cube model: the parser's reading, the aggregate (parsed or by
slot filling), the rows behind an aggregate, listings and stored queries.

:class:`SemanticLayer` is the model with the backend running it, its dimension values and its lexicon; they
are replaced together when new models or a new glossary are ingested (:meth:`ModelRoutes.swap`). Each call
reads :attr:`ModelRoutes.current` once, so one question sees one consistent (model, backend) pair.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

from cube_models.backends.base import LoadResult, SemanticBackend
from cube_models.model import SemanticModel
from cubesage_core.llm import wants_llm
from router.aggregate import AggregateContext, AggregateError, Binding, OutOfModelError, run_aggregate
from router.aggregate.context import member_path
from router.aggregate.drill import drill_query
from router.aggregate.entities import entity_filters
from router.aggregate.follow_up import FollowUp
from router.aggregate.measure_match import name_binding
from router.aggregate.types import AggregateResult
from router.aggregate.values import ValueIndex
from router.detail.entities import EntityMatch
from router.intent import IntentSignals
from router.parse import Knowledge, facts, parse
from router.parse.cube import aggregate_draft, listing_query
from router.parse.reading import Reading
from router.parse.rows import row_targets
from router.parse.spelling import Correction, Speller
from router.parse.verdict import judge
from router.signals import intent_signals
from router.understanding.types import Understanding

if TYPE_CHECKING:
    from sag_index.recall import TableHit


@dataclass
class SemanticLayer:
    """The Cube model, the backend running it and its dimension values; replaced together when new
    models are ingested."""

    model: SemanticModel
    backend: SemanticBackend
    values: ValueIndex
    knowledge: Knowledge  # the model's lexicon (model + glossary + values)
    speller: Speller  # typos read as the lexicon's or the language's words


class ModelRoutes:
    """The pipeline's model-bound components over the current :class:`SemanticLayer`."""

    def __init__(self, current: SemanticLayer) -> None:
        self.current = current

    def swap(self, layer: SemanticLayer) -> SemanticLayer:
        """Use ``layer`` from now on; returns the retired one (its backend may still serve running queries)."""
        retired, self.current = self.current, layer
        return retired

    def model(self) -> SemanticModel:
        return self.current.model

    def values(self) -> ValueIndex:
        return self.current.values

    def spell(self, question: str) -> tuple[str, list[Correction]]:
        return self.current.speller.correct(question)

    def read(self, understanding: Understanding, entities: list[EntityMatch]) -> Reading:
        current = self.current
        return parse(understanding, current.knowledge, row_targets(entities, current.model))

    def signals(
        self,
        understanding: Understanding,
        retrieval: dict[str, Any],
        entities: list[EntityMatch],
        tables: list[TableHit],
    ) -> IntentSignals:
        return intent_signals(understanding, retrieval, entities, tables, self.current.model)

    def aggregate(
        self,
        understanding: Understanding,
        retrieval: dict[str, Any],
        today: date,
        use_llm: bool | None,
        follow_up: FollowUp | None = None,
    ) -> AggregateResult:
        current = self.current  # one consistent (model, backend) pair for the whole question
        if follow_up is None and (done := _parsed_aggregate(current, understanding, retrieval, today, use_llm)):
            return done
        context = generation_context(retrieval, use_llm)
        if not any(b.mapped_asset_type == "metric" for b in context.bindings) and (
            named := name_binding(current.model, understanding.normalized)
        ):
            context.bindings.append(named)  # a measure the question names in other words
        valued = {member_path(b.mapped_asset_id) for b in context.bindings if b.filter_value}
        if retrieval.get("entities"):  # named rows filter the aggregate ("revenue of <a customer>")
            context.filters += entity_filters(
                retrieval["entities"], current.model, {m.split(".", 1)[0] for m in valued}
            )
        # dimension values the question names ("the Pulse brand"), unless the glossary binds that member
        named_members = {f["member"] for f in context.filters}
        context.filters += current.values.filters(
            understanding.normalized, valued | named_members, {b.matched for b in context.bindings if b.filter_value}
        )
        return run_aggregate(
            understanding, context, current.model, current.backend, today=today, use_llm=use_llm, follow_up=follow_up
        )

    def drill(
        self,
        cube_query: dict[str, Any],
        rows: list[dict[str, Any]],
        named: list[str],
        limit: int,
        shown: int,
        today: date,
    ) -> tuple[dict[str, Any], LoadResult] | None:
        """The rows behind an aggregate (``router.aggregate.drill``) when the clause asking for them names
        the measure's own cube or no cube; None when the aggregate cannot be drilled."""
        current = self.current
        measures = cube_query.get("measures") or []
        own = measures[0].split(".", 1)[0] if measures else None
        if own is None or any(cube != own for cube in named):
            return None
        query = drill_query(cube_query, rows, current.model, own, limit, shown)
        if query is None:
            return None
        query["dimensions"] = facts.with_referred_labels(current.model, own, query["dimensions"])
        return query, current.backend.load(query, today=today)

    def listing(
        self, reading: Reading, understanding: Understanding, today: date, limit: int
    ) -> tuple[dict[str, Any], LoadResult]:
        """The rows a listing reading asks for (at most ``limit``), as a dimensions-only Cube query."""
        current = self.current
        query = listing_query(reading, understanding, current.model, limit)
        return query, current.backend.load(query, today=today)

    def load(self, cube_query: dict[str, Any], today: date) -> LoadResult:
        return self.current.backend.load(cube_query, today=today)


def _parsed_aggregate(
    current: SemanticLayer, understanding: Understanding, retrieval: dict[str, Any], today: date, use_llm: bool | None
) -> AggregateResult | None:
    """The aggregate from the parser's reading; None when the reading is no aggregate (slot filling
    decides); raises the reading's refusal."""
    reading = parse(understanding, current.knowledge, row_targets(retrieval.get("entities") or [], current.model))
    verdict = judge(reading)
    if verdict.asks:
        raise AggregateError(verdict.refusal or "")
    if reading.unknown:  # what the question is about is not in the model (a listing too: no guessed total)
        raise OutOfModelError(verdict.refusal or "the question names what the model does not have")
    if reading.refusal:
        raise AggregateError(reading.refusal)
    if reading.intent is None and (reading.mentions or reading.unhonoured):
        raise OutOfModelError(verdict.refusal or "no measure of the model is named: " + _measures_hint(current.model))
    if reading.unhonoured and reading.intent is not None:  # "top 3 ... by <nothing the model has>"
        raise OutOfModelError(verdict.refusal or "the question could not be read against the model")
    if reading.intent != "aggregate":
        return None
    if not verdict.answers:
        raise OutOfModelError(verdict.refusal or "the question could not be read against the model")
    context = generation_context(retrieval, use_llm)
    context.bindings = [Binding(f"parse:{m}", m, "metric", f"metric:{m}") for m in reading.measures]
    return run_aggregate(
        understanding,
        context,
        current.model,
        current.backend,
        today=today,
        use_llm=use_llm,
        parsed=aggregate_draft(reading, understanding, current.model),
    )


def generation_context(retrieval: dict[str, Any], use_llm: bool | None) -> AggregateContext:
    """The aggregate path's retrieval context: the main question's bindings; in LLM mode the assets, few-shots
    and rendered context of the fused retrieval (RAG-Fusion over the sub-queries) feed the prompt."""
    context = AggregateContext.of(retrieval["result"])
    fused = retrieval.get("context")
    if fused is not None and wants_llm(use_llm):  # not get_lm(): building the LM may raise (its step falls back)
        wide = AggregateContext.of(fused)
        context.assets, context.few_shots, context.context_text = wide.assets, wide.few_shots, wide.context_text
        context.budgeted = wide.budgeted
    return context


def _measures_hint(model: SemanticModel) -> str:
    """ "name one of its measures, e.g. Revenue, Number of orders, Average order value"."""
    titles = [m.title for m in model.measures() if m.public and m.title][:3]
    return "name one of its measures" + (f", e.g. {', '.join(titles)}" if titles else "")
