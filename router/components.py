"""The pipeline's moving parts behind one small interface, wired to the real packages by ``load_components``.

Query understanding, decomposition, intent and the aggregate path live in ``router``; retrieval in
``fourengine``; table/row recall in ``sag_index``; the Cube model and backends in ``cube_models``.
Tests pass small fakes with the same call shapes.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date
from typing import Any

from fourengine.passages import Passage
from router.detail.entities import EntityMatch

log = logging.getLogger(__name__)


@dataclass
class Components:
    understand: Callable[..., Any]  # (question, today, *, use_llm) -> Understanding
    decompose: Callable[..., list[Any]]  # (understanding, *, use_llm) -> [SubQuery]
    retrieve: Callable[[Any, list[Any]], tuple[dict[str, Any], list[dict[str, Any]]]]
    recall_tables: Callable[..., list[Any]]  # (question, rows=row hits already recalled)
    recall_rows: Callable[[str], list[Any]]
    signals: Callable[[Any, dict[str, Any], list[EntityMatch], list[Any]], Any]
    classify_intent: Callable[..., Any]  # (understanding, signals, *, use_llm) -> IntentDecision
    aggregate: Callable[..., Any]  # (understanding, retrieval, today, use_llm, follow_up=None)
    close: Callable[[], None] = lambda: None
    # (kind) after an ingest: "wiki" | "cube-models" | "glossary"
    refresh: Callable[[str], None] = lambda kind: None
    value_index: Callable[[], Any] = lambda: None  # the current model's dimension values (None: not loaded)
    # (cube_query, rows, named cubes, limit, shown, today) -> (drill-down query, LoadResult) | None
    drill: Callable[..., Any] = lambda *args: None
    # (understanding, entity rows) -> router.parse.Reading | None (None: no parser for this warehouse)
    parse: Callable[..., Any] = lambda understanding, entities: None
    # (listing reading, understanding, today, row limit) -> (dimensions-only Cube query, LoadResult)
    listing: Callable[..., Any] = lambda reading, understanding, today, limit: None
    # (cube_query, today) -> LoadResult of the current backend: a stored query run again, without a question
    load: Callable[..., Any] = lambda *args: None
    model: Callable[[], Any] = lambda: None  # the current Cube model (None: not loaded)


RETIRED_BACKEND_GRACE_S = 60.0  # a replaced backend is closed after in-flight queries (5 s timeout) are done


@dataclass
class _Semantic:
    """The Cube model, the backend running it and its dimension values; replaced together when new
    models are ingested."""

    model: Any
    backend: Any
    values: Any
    knowledge: Any  # router.parse.Knowledge: the model's lexicon (model + glossary + values)


def load_components(settings: Any, url: str) -> Components:
    """The real components over the database at ``url`` (startup cost paid here, once)."""
    from cube_models.backends import get_backend
    from cube_models.model import load_model
    from cubesage_core.db import connect
    from cubesage_core.embeddings import get_embedder
    from cubesage_core.llm import wants_llm
    from fourengine.fusion import fuse
    from fourengine.model_terms import sync_model_terms
    from fourengine.retrieve import Retriever
    from fourengine.store import read_terms
    from router.aggregate import AggregateError, Binding, OutOfModelError, run_aggregate
    from router.aggregate.context import member_path
    from router.aggregate.drill import drill_query
    from router.aggregate.entities import entity_filters
    from router.aggregate.measure_match import name_binding
    from router.aggregate.values import ValueIndex
    from router.complexity import estimate_complexity
    from router.decompose import decompose, rrf_fuse
    from router.intent import classify_intent
    from router.parse import Knowledge, build_lexicon, parse
    from router.parse.cube import aggregate_draft, listing_query
    from router.parse.nearest import Nearest
    from router.parse.probe import Probe
    from router.parse.rows import row_targets
    from router.parse.verdict import judge
    from router.understanding import understand
    from sag_index.backends import get_store
    from sag_index.recall import SagRecall

    sag = SagRecall(url, get_store(settings, url), settings)
    embedder = get_embedder(settings.embedding_backend)
    _calibrate(url, embedder)
    retriever = Retriever(url, embedder=embedder, passages=WikiPassages(sag))
    workers = ThreadPoolExecutor(max_workers=4, thread_name_prefix="cubesage-retrieve")

    def semantic_layer() -> _Semantic:
        model = load_model(settings.model_folder())
        with connect(url) as conn:
            values = ValueIndex.load(conn, model, settings.warehouse_schema)
            sync_model_terms(conn)  # the model's own words bind like glossary terms
            terms = read_terms(conn)
            probe = Probe.load(conn, url, model, settings.warehouse_schema)
        knowledge = Knowledge(model, build_lexicon(model, terms, values), probe.find,
                              Nearest.build(model, embedder).find)
        return _Semantic(model, get_backend(settings, url, model), values, knowledge)

    semantic = semantic_layer()

    def retrieve(understanding: Any, sub_queries: list[Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        subs = [s for s in sub_queries if _text(s) != understanding.normalized] if len(sub_queries) > 1 else []
        vectors = embedder.embed([_text(s) for s in subs]) if subs else []  # one batch for all sub-queries
        pending = {_text(sub): workers.submit(retriever.retrieve_sync, _text(sub),
                                              getattr(sub, "search_terms", None) or None, embedding=vec)
                   for sub, vec in zip(subs, vectors, strict=True)}  # sub-queries run concurrently with the main
        main = retriever.retrieve_sync(understanding.normalized, understanding.search_terms,
                                       complexity=estimate_complexity(understanding, sub_queries),
                                       grade_with_llm=settings.llm_crag_grade and wants_llm())
        by_sub = {text: future.result() for text, future in pending.items()}
        fused = rrf_fuse([[a.asset.asset_id for a in r.assets] for r in [main, *by_sub.values()]])
        context = fuse(main, list(by_sub.values()), retriever.settings)  # what generation and provenance see
        return ({"result": main, "by_sub": by_sub, "context": context},
                [{"id": i, "score": round(s, 5)} for i, s in fused])

    def read(understanding: Any, entities: list[EntityMatch]) -> Any:
        current = semantic
        return parse(understanding, current.knowledge, row_targets(entities, current.model))

    def parsed_aggregate(current: _Semantic, understanding: Any, retrieval: dict[str, Any], today: date,
                         use_llm: bool | None) -> Any:
        """The aggregate from the parser's reading; None when the reading is no aggregate (slot filling
        decides); raises the reading's refusal."""
        reading = parse(understanding, current.knowledge, row_targets(retrieval.get("entities") or [],
                                                                      current.model))
        verdict = judge(reading)
        if reading.unknown and reading.intent != "detail":  # what the question is about is not in the model
            raise OutOfModelError(verdict.refusal or "the question names what the model does not have")
        if reading.refusal:
            raise AggregateError(reading.refusal)
        if reading.intent is None and (reading.mentions or reading.unhonoured):
            raise OutOfModelError(verdict.refusal or "no measure of the model is named: "
                                  + _measures_hint(current.model))
        if reading.unhonoured and reading.intent is not None:  # "top 3 ... by <nothing the model has>"
            raise OutOfModelError(verdict.refusal or "the question could not be read against the model")
        if reading.intent != "aggregate":
            return None
        if not verdict.answers:
            raise OutOfModelError(verdict.refusal or "the question could not be read against the model")
        context = _generation_context(retrieval, use_llm)
        context.bindings = [Binding(f"parse:{m}", m, "metric", f"metric:{m}") for m in reading.measures]
        return run_aggregate(understanding, context, current.model, current.backend, today=today,
                             use_llm=use_llm, parsed=aggregate_draft(reading, understanding, current.model))

    def aggregate(understanding: Any, retrieval: dict[str, Any], today: date, use_llm: bool | None,
                  follow_up: Any = None) -> Any:
        current = semantic  # one consistent (model, backend) pair for the whole question
        if follow_up is None and (done := parsed_aggregate(current, understanding, retrieval, today, use_llm)):
            return done
        context = _generation_context(retrieval, use_llm)
        if not any(b.mapped_asset_type == "metric" for b in context.bindings) and (
                named := name_binding(current.model, understanding.normalized)):
            context.bindings.append(named)  # a measure the question names in other words
        valued = {member_path(b.mapped_asset_id) for b in context.bindings if b.filter_value}
        if retrieval.get("entities"):  # rows the question names filter the aggregate ("GMV of Li Wei")
            context.filters += entity_filters(retrieval["entities"], current.model,
                                              {m.split(".", 1)[0] for m in valued})
        # dimension values the question names ("the Pulse brand"), unless the glossary binds that member
        named = {f["member"] for f in context.filters}
        context.filters += current.values.filters(understanding.normalized, valued | named,
                                                  {b.matched for b in context.bindings if b.filter_value})
        return run_aggregate(understanding, context, current.model, current.backend, today=today,
                             use_llm=use_llm, follow_up=follow_up)

    def drill(cube_query: dict[str, Any], rows: list[dict[str, Any]], named: list[str], limit: int, shown: int,
              today: date) -> Any:
        """The rows behind an aggregate (``router.aggregate.drill``) when the clause asking for them names
        the measure's own cube or no cube; None when the aggregate cannot be drilled."""
        current = semantic
        measures = cube_query.get("measures") or []
        own = measures[0].split(".", 1)[0] if measures else None
        if own is None or any(cube != own for cube in named):
            return None
        query = drill_query(cube_query, rows, current.model, own, limit, shown)
        return None if query is None else (query, current.backend.load(query, today=today))

    def listing(reading: Any, understanding: Any, today: date, limit: int) -> Any:
        """The rows a listing reading asks for (at most ``limit``), as a dimensions-only Cube query."""
        current = semantic
        query = listing_query(reading, understanding, current.model, limit)
        return query, current.backend.load(query, today=today)

    def load(cube_query: dict[str, Any], today: date) -> Any:
        return semantic.backend.load(cube_query, today=today)

    def classify(understanding: Any, signals: Any, use_llm: bool | None = None) -> Any:
        return classify_intent(understanding, signals, use_llm=use_llm)

    def refresh(kind: str) -> None:
        """Use what was just ingested: re-read the model folder, forget cached catalog and SAG searches."""
        nonlocal semantic
        if kind == "cube-models":
            retired, semantic = semantic, semantic_layer()
            _close_later(retired.backend)
        if kind == "glossary":
            retired, semantic = semantic, semantic_layer()  # the parser's lexicon holds the glossary
            _close_later(retired.backend)
        if kind in ("cube-models", "glossary"):
            retriever.invalidate_cache()
        if kind == "wiki":
            sag.refresh()

    def close() -> None:
        workers.shutdown(wait=True)
        retriever.close()
        sag.close()
        semantic.backend.close()

    return Components(
        understand=understand, decompose=decompose, retrieve=retrieve, recall_tables=sag.recall_tables,
        recall_rows=sag.recall_rows, classify_intent=classify, aggregate=aggregate,
        signals=lambda u, retrieval, entities, tables: intent_signals(u, retrieval, entities, tables,
                                                                      semantic.model),
        close=close, refresh=refresh, value_index=lambda: semantic.values, drill=drill, parse=read,
        listing=listing, load=load, model=lambda: semantic.model,
    )


class WikiPassages:
    """The SAG wiki search as fourengine's passage source (corrective retrieval of a low CRAG grade). Always
    the fast SAG steps: LLM mode's NER and selection serve detail recall, not the schema retrieval before the
    LLM grades it (they would add two sequential calls to every low-graded question)."""

    def __init__(self, sag: Any) -> None:
        self.sag = sag

    def passages(self, question: str, limit: int) -> list[Passage]:
        from cubesage_core.llm import fast_only
        from sag_index.errors import NotIndexedError

        try:
            with fast_only():
                events = self.sag.search(question).events
        except NotIndexedError:  # a fresh database before `sag index`: no wiki passages yet
            return []
        return [Passage(str(table), float(e.score), e.title, e.event_id, e.content)
                for e in events[:limit] for table in e.meta.get("tables", [])]


def _calibrate(url: str, embedder: Any) -> None:
    """Fit the retrieval thresholds to the embedder when none are stored, or they were fitted for another
    embedder or index (``fourengine.calibration``); a database that refuses the write keeps what it has."""
    import psycopg

    from cubesage_core.db import connect
    from fourengine.calibration import ensure

    try:
        with connect(url) as conn:
            ensure(conn, embedder)
    except psycopg.Error as err:
        log.warning("retrieval calibration not updated: %s", err)


def _generation_context(retrieval: dict[str, Any], use_llm: bool | None) -> Any:
    """The aggregate path's retrieval context: the main question's bindings; in LLM mode the assets, few-shots
    and rendered context of the fused retrieval (RAG-Fusion over the sub-queries) feed the prompt."""
    from cubesage_core.llm import get_lm
    from router.aggregate import AggregateContext

    context = AggregateContext.of(retrieval["result"])
    fused = retrieval.get("context")
    if fused is not None and use_llm is not False and get_lm() is not None:
        wide = AggregateContext.of(fused)
        context.assets, context.few_shots, context.context_text = wide.assets, wide.few_shots, wide.context_text
    return context


def _measures_hint(model: Any) -> str:
    """"name one of its measures, e.g. Revenue, Number of orders, Average order value"."""
    titles = [m.title for m in model.measures() if m.public and m.title][:3]
    return "name one of its measures" + (f", e.g. {', '.join(titles)}" if titles else "")


def _close_later(backend: Any) -> None:
    timer = threading.Timer(RETIRED_BACKEND_GRACE_S, backend.close)
    timer.daemon = True
    timer.start()


def intent_signals(understanding: Any, retrieval: dict[str, Any], entities: list[EntityMatch],
                   table_hits: list[Any], model: Any = None) -> Any:
    """Warehouse evidence for the intent classifier: bindings, entity rows, confident SAG tables, few-shots,
    and a measure the question names in other words (``measure_match``, strong matches only)."""
    from router.aggregate.measure_match import match_measure
    from router.intent import IntentSignals, RowHit

    main = retrieval.get("result")
    bindings = list(getattr(main, "term_bindings", []) or [])
    metrics = [b.mapped_asset_id for b in bindings if b.mapped_asset_type == "metric"]
    named = match_measure(model, understanding.normalized) if model is not None and not metrics else None
    if named is not None and named.strong:
        metrics.append(f"metric:{named.path}")
    return IntentSignals(
        metric_bindings=metrics,
        dimension_bindings=[b.mapped_asset_id for b in bindings if b.mapped_asset_type == "dimension"],
        value_bindings=[b.filter_value for b in bindings if b.filter_value],
        row_hits=[RowHit(e.label, e.entity_type, e.score) for e in entities],
        table_hits=[str(h.table) for h in table_hits[:3]],
        table_words=[b.matched or b.canonical_term for b in bindings if b.mapped_asset_type in ("table", "segment")],
        bound_words=[b.matched or b.canonical_term for b in bindings],
        few_shots=[{"question": f.question, "cube_query": f.cube_query, "sql": f.sql}
                   for f in getattr(main, "few_shots", []) or []],
        warehouse=warehouse_text(model) if model is not None else "",
    )


def warehouse_text(model: Any, subjects: int = 12, measures: int = 8) -> str:
    """What the warehouse holds, from the model: its subjects (cube titles) and some measures."""
    cubes = [c for c in model.cubes.values() if c.title]
    named = [m.title for c in cubes for m in c.measures.values() if m.title and m.public and m.type != "count"]
    return (f"subjects: {', '.join(c.title for c in cubes[:subjects])}; "
            f"measures such as: {', '.join(named[:measures]) or 'counts'}")


def _text(sub: Any) -> str:
    return sub if isinstance(sub, str) else str(getattr(sub, "text", sub))
