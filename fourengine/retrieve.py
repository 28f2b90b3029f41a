"""The four-engine retrieval: R + V + D concurrently, then G, the reranker, the CRAG gate and the budget.

``Retriever(pool_or_url, settings).retrieve(question, search_terms)`` is the entry point
the router calls (``retrieve_sync`` for synchronous callers). Every stage's latency is
recorded in ``RetrievalResult.timings_ms``.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import psycopg
from psycopg_pool import AsyncConnectionPool

from cubesage_core.db import aread, async_pool
from cubesage_core.embeddings import DIM, Embedder, get_embedder
from fourengine.bindings import build_bindings
from fourengine.budget import build_context
from fourengine.calibration import Calibration, fingerprint
from fourengine.calibration import load_async as load_calibration
from fourengine.crag import assess, conclude, missing_terms, rewrite
from fourengine.crag_llm import llm_grade
from fourengine.engines._rows import ASSET_COLUMNS, asset_from
from fourengine.engines.fewshot import similar_examples
from fourengine.engines.graph import GraphCache, JoinGraph
from fourengine.engines.relational import match_terms
from fourengine.engines.vector import search_assets
from fourengine.evidence import R_PREFIX, table_evidence
from fourengine.models import (
    Asset,
    ContextBlock,
    CragResult,
    FewShot,
    JoinPlan,
    RankedAsset,
    RetrievalResult,
    TermBinding,
    TermHit,
    VectorHit,
    table_of,
)
from fourengine.passages import Passage, PassageSource, table_assets
from fourengine.rerank import ModelReranker, RerankContext, Reranker, RuleReranker
from fourengine.settings import RetrievalSettings
from fourengine.terms import STOPWORDS, default_search_terms, normalise

T = TypeVar("T")
MAX_TERMINALS = 4
MAX_SEARCH_TERMS = 256
RULE_BELOW_BOUND = 0.05  # a rule pulled in by a binding ranks just below the bound asset it applies to
TERMINAL_RATIO = 0.8
CORRECTIVE_PASSAGES = 5


class RetrievalError(RuntimeError):
    """Retrieval could not run (bad input or database failure)."""


class RetrievalUnavailable(RetrievalError):
    """The database could not be reached (or dropped the connection twice) during retrieval."""


class _Catalog:
    """Table and business-rule assets and the join graph, cached (they change only on export/glossary load)."""

    def __init__(self, ttl_s: float) -> None:
        self.graph = GraphCache(ttl_s)
        self.ttl_s = ttl_s
        self._assets: dict[str, Asset] | None = None
        self._calibration: Calibration | None = None
        self._loaded_at = 0.0

    def invalidate(self) -> None:
        self._assets = None
        self.graph.invalidate()

    async def get(
        self, pool: AsyncConnectionPool
    ) -> tuple[dict[str, Asset], list[Asset], JoinGraph, Calibration | None]:
        """(tables by id, business rules, join graph, stored calibration); retried once when the server
        dropped the connection."""
        return await aread(pool, self._get_on)

    async def _get_on(
        self, conn: psycopg.AsyncConnection
    ) -> tuple[dict[str, Asset], list[Asset], JoinGraph, Calibration | None]:
        if self._assets is None or time.monotonic() - self._loaded_at > self.ttl_s:
            cur = await conn.execute(
                f"SELECT {ASSET_COLUMNS} FROM semlayer.asset a WHERE a.asset_type IN ('table', 'business_rule')"
            )
            self._assets = {row[0]: asset_from(row) for row in await cur.fetchall()}
            self._calibration = await load_calibration(conn)
            self._loaded_at = time.monotonic()
        tables = {k: a for k, a in self._assets.items() if a.asset_type == "table"}
        rules = [a for a in self._assets.values() if a.asset_type == "business_rule"]
        return tables, rules, await self.graph.get(conn), self._calibration


async def _timed(timings: dict[str, float], name: str, work: Awaitable[T]) -> T:
    started = time.perf_counter()
    try:
        return await work
    finally:
        timings[name] = (time.perf_counter() - started) * 1000


class Retriever:
    """Four-engine retrieval over the semlayer of one database."""

    def __init__(
        self,
        pool_or_url: AsyncConnectionPool | str,
        settings: RetrievalSettings | None = None,
        *,
        embedder: Embedder | None = None,
        reranker: Reranker | None = None,
        passages: PassageSource | None = None,
    ) -> None:
        self.settings = settings or RetrievalSettings()
        self.passages = passages
        self._own_pool = isinstance(pool_or_url, str)
        self.pool = async_pool(pool_or_url, min_size=3, max_size=8) if isinstance(pool_or_url, str) else pool_or_url
        self._opened = False
        self._open_lock = asyncio.Lock()
        self.embedder = embedder
        self.reranker = reranker or RuleReranker()
        self.catalog = _Catalog(self.settings.graph_cache_s)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------
    async def _ensure_open(self) -> None:
        if self._own_pool and not self._opened:
            async with self._open_lock:
                if not self._opened:
                    await self.pool.open(wait=True)
                    self._opened = True

    async def aclose(self) -> None:
        if self._own_pool and self._opened:
            await self.pool.close()
            self._opened = False

    def close(self) -> None:
        if self._loop is not None:
            self._run(self.aclose())
            self._loop.call_soon_threadsafe(self._loop.stop)
            if self._thread is not None:
                self._thread.join(timeout=5)
            self._loop = None

    def invalidate_cache(self) -> None:
        """Forget the cached join graph, tables and business rules (after a model export or glossary load)."""
        self.catalog.invalidate()

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
            self._thread = threading.Thread(target=self._loop.run_forever, name="fourengine-loop", daemon=True)
            self._thread.start()
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def retrieve_sync(self, question: str, search_terms: list[str] | None = None, **kwargs: Any) -> RetrievalResult:
        """``retrieve`` for synchronous callers (runs on the retriever's own event loop thread).

        A retriever that owns its pool serves either sync or async callers, not both: the pool lives on
        the event loop that first opened it.
        """
        return self._run(self.retrieve(question, search_terms, **kwargs))

    # -- engines --------------------------------------------------------------------
    async def _engine(self, fn: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any) -> T:
        """One engine's read on a pooled connection (retried once when the server dropped it mid-read)."""
        return await aread(self.pool, lambda conn: fn(conn, *args, **kwargs))

    async def _r_and_v(
        self,
        timings: dict[str, float],
        suffix: str,
        terms: list[str],
        question: str,
        vec: np.ndarray,
        trigram: float,
        top_k: int,
        scope: str | None,
        with_d: bool,
        settings: RetrievalSettings,
    ) -> tuple[list[TermHit], list[VectorHit], list[FewShot]]:
        s = settings
        jobs: list[Awaitable[Any]] = [
            _timed(
                timings,
                f"R{suffix}",
                self._engine(match_terms, terms, question, trigram_threshold=trigram, scope=scope),
            ),
            _timed(
                timings, f"V{suffix}", self._engine(search_assets, vec, top_k=top_k, types=s.vector_types, scope=scope)
            ),
        ]
        if with_d:
            jobs.append(
                _timed(
                    timings,
                    "D",
                    self._engine(
                        similar_examples,
                        vec,
                        hit_threshold=s.few_shot_threshold,
                        floor=s.few_shot_example_threshold,
                        limit=s.few_shot_limit,
                    ),
                )
            )
        results = await asyncio.gather(*jobs)
        return results[0], results[1], results[2] if with_d else []

    def _settings_for(self, calibration: Calibration | None) -> tuple[RetrievalSettings, str]:
        """The settings in force: the calibrated thresholds when they were fitted for this embedder."""
        if not self.settings.calibrated or calibration is None:
            return self.settings, "seed"
        if calibration.fingerprint != fingerprint(self.embedder or get_embedder()):
            return self.settings, "stale"
        return calibration.apply(self.settings), "calibrated"

    async def _corrective(
        self,
        timings: dict[str, float],
        found: _Found,
        question: str,
        terms: list[str],
        vec: np.ndarray,
        scope: str | None,
        s: RetrievalSettings,
        tables: dict[str, Asset],
    ) -> None:
        """Low grade: rewrite the query with the names of the terms it matched, search V wider (lower threshold,
        top_k x factor) and R fuzzier, and ask the wiki passages which tables the question is about."""
        crag = found.crag
        threshold = s.threshold * s.corrective_threshold_factor
        top_k = s.top_k * s.corrective_top_k_factor
        trigram = max(s.trigram_threshold - 0.2, 0.3)
        rewritten = rewrite(question, found.r_hits)
        vec2 = vec if rewritten == question else (self.embedder or get_embedder()).embed_one(rewritten)
        wiki = (
            asyncio.create_task(asyncio.to_thread(self.passages.passages, question, CORRECTIVE_PASSAGES))
            if self.passages
            else None
        )
        r_more, v_more, _ = await self._r_and_v(
            timings,
            "_corrective",
            terms,
            rewritten,
            np.asarray(vec2, dtype=np.float32),
            trigram,
            top_k,
            scope,
            with_d=False,
            settings=s,
        )
        wiki_found = await _timed(timings, "W", wiki) if wiki is not None else []
        found.r_hits = _dedupe_hits(found.r_hits + r_more)
        found.v_all = found.v_all + v_more
        found.v_hits = [h for h in v_more if h.score >= threshold]
        found.bindings = build_bindings(found.r_hits, found.v_hits, s.binding_vector_threshold)
        found.passages = table_assets(wiki_found, tables) if scope is None else []
        found.corrected = True
        crag.actions = ([f"rewrite:{rewritten}"] if rewritten != question else []) + [
            f"lower_threshold:{threshold:.2f}",
            f"raise_top_k:{top_k}",
            f"fuzzy_terms:{trigram:.2f}",
            f"wiki_passages:{len(found.passages)}",
            f"supplement_by_bindings:{len(found.bindings)}",
        ]
        _conclude_corrective(found, question, terms, v_more, s)

    # -- main -----------------------------------------------------------------------
    async def retrieve(
        self,
        question: str,
        search_terms: list[str] | None = None,
        *,
        embedding: np.ndarray | None = None,
        complexity: str = "medium",
        scope: str | None = None,
        grade_with_llm: bool = False,
    ) -> RetrievalResult:
        """Retrieve, rerank, grade and budget the schema context of ``question``.

        ``search_terms`` come from query understanding (``default_search_terms`` when None);
        ``scope`` restricts retrieval to assets whose ``meta.namespace`` equals it; ``complexity``
        (simple | medium | complex) sets the few-shots of the budget; ``grade_with_llm`` lets the LLM
        grade the budgeted context (``fourengine.crag_llm``; a low grade runs the corrective retrieval).
        Database failures surface as ``RetrievalError``.
        """
        try:
            return await self._retrieve(question, search_terms, embedding, complexity, scope, grade_with_llm)
        except psycopg.OperationalError as exc:  # the database went away: a 503, not a bad question
            raise RetrievalUnavailable(f"the database is unavailable for retrieval: {exc}") from exc
        except psycopg.Error as exc:
            raise RetrievalError(f"retrieval failed in the database: {exc}") from exc

    async def _retrieve(
        self,
        question: str,
        search_terms: list[str] | None,
        embedding: np.ndarray | None,
        complexity: str,
        scope: str | None,
        grade_with_llm: bool,
    ) -> RetrievalResult:
        if not question or not question.strip():
            raise RetrievalError("question is empty")
        s = self.settings
        if complexity not in s.few_shots_by_complexity:
            raise RetrievalError(f"complexity must be one of {sorted(s.few_shots_by_complexity)}")
        await self._ensure_open()
        timings: dict[str, float] = {}
        started = time.perf_counter()
        if embedding is None:
            t = time.perf_counter()
            embedding = (self.embedder or get_embedder()).embed_one(question)
            timings["embed"] = (time.perf_counter() - t) * 1000
        vec = np.asarray(embedding, dtype=np.float32)
        if vec.shape != (DIM,):
            raise RetrievalError(f"embedding must have shape ({DIM},), got {vec.shape}")
        terms = [normalise(t) for t in (search_terms if search_terms is not None else default_search_terms(question))]
        terms = [t for t in dict.fromkeys(terms) if t][:MAX_SEARCH_TERMS]
        engines_started = time.perf_counter()

        tables, rules, graph, calibration = await self.catalog.get(self.pool)
        s, calibration_state = self._settings_for(calibration)
        r_hits, v_all, few_shots = await self._r_and_v(
            timings, "", terms, question, vec, s.trigram_threshold, s.top_k, scope, with_d=True, settings=s
        )
        top_score = max((h.score for h in v_all), default=0.0)
        v_hits = [h for h in v_all if h.score >= s.threshold]
        bindings = build_bindings(r_hits, v_hits, s.binding_vector_threshold)
        found = _Found(r_hits, v_all, v_hits, few_shots, bindings, assess(top_score, len(bindings), s))
        found.crag.calibration = calibration_state
        if found.crag.grade == "low":
            await self._corrective(timings, found, question, terms, vec, scope, s, tables)
        timings["R+V+D"] = (time.perf_counter() - engines_started) * 1000
        catalog = (tables, rules, graph)
        assembled = self._assemble(timings, question, terms, found, complexity, scope, s, catalog)
        if grade_with_llm:
            assembled = await self._grade_by_llm(
                timings, question, terms, vec, found, complexity, scope, s, catalog, assembled
            )
        ranked, plan, context = assembled
        timings["retrieval"] = (time.perf_counter() - engines_started) * 1000
        timings["total"] = (time.perf_counter() - started) * 1000
        return RetrievalResult(
            question, terms, ranked, found.bindings, found.few_shots, plan, found.crag, context, timings
        )

    def _assemble(
        self,
        timings: dict[str, float],
        question: str,
        terms: list[str],
        found: _Found,
        complexity: str,
        scope: str | None,
        s: RetrievalSettings,
        catalog: tuple[dict[str, Asset], list[Asset], JoinGraph],
    ) -> tuple[list[RankedAsset], JoinPlan, ContextBlock]:
        """Engine G (join plan), the reranker and the token budget over what the engines found."""
        tables, rules, graph = catalog
        t = time.perf_counter()
        if scope is not None:
            tables = {k: a for k, a in tables.items() if a.meta.get("namespace") == scope}
        similarity = {h.asset.asset_id: h.score for h in sorted(found.v_all, key=lambda h: h.score)}
        ctx = RerankContext(question, terms, {}, found.bindings, JoinPlan(), s, tables, similarity)
        _merge(ctx, found.r_hits, found.v_hits)
        _merge_passages(ctx, found.passages, s.threshold)
        _bound_rules(ctx, rules, s.bound_score - RULE_BELOW_BOUND)
        plan = _plan_joins(ctx, graph, found.bindings, found.few_shots, s.graph_depth)
        ctx.join_plan = plan
        timings["G"] = timings.get("G", 0.0) + (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        reranker = self.reranker
        if found.crag.grade == "high" and isinstance(reranker, ModelReranker):  # a high grade skips the model
            reranker = reranker.base
            if "skip:model_rerank" not in found.crag.actions:
                found.crag.actions.append("skip:model_rerank")
        ranked = reranker.rerank(ctx)
        timings["rerank"] = timings.get("rerank", 0.0) + (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        context = build_context(ranked, found.bindings, found.few_shots, plan, s, complexity)
        timings["budget"] = timings.get("budget", 0.0) + (time.perf_counter() - t) * 1000
        return ranked, plan, context

    async def _grade_by_llm(
        self,
        timings: dict[str, float],
        question: str,
        terms: list[str],
        vec: np.ndarray,
        found: _Found,
        complexity: str,
        scope: str | None,
        s: RetrievalSettings,
        catalog: tuple[dict[str, Asset], list[Asset], JoinGraph],
        assembled: tuple[list[RankedAsset], JoinPlan, ContextBlock],
    ) -> tuple[list[RankedAsset], JoinPlan, ContextBlock]:
        """The LLM grades the budgeted context (CRAG before generation); low: corrective retrieval with what it
        says is missing as extra terms, then the context is assembled again."""
        t = time.perf_counter()
        verdict, found.crag.mode = await asyncio.to_thread(llm_grade, question, assembled[2].text)
        timings["crag_llm"] = (time.perf_counter() - t) * 1000
        if verdict is None:
            return assembled
        found.crag.rule_grade, found.crag.grade, found.crag.missing = found.crag.grade, verdict.grade, verdict.missing
        if verdict.grade != "low" or found.corrected:
            return assembled
        more = [normalise(m) for m in verdict.missing]
        await self._corrective(
            timings, found, question, list(dict.fromkeys([*terms, *(m for m in more if m)])), vec, scope, s, catalog[0]
        )
        return self._assemble(timings, question, terms, found, complexity, scope, s, catalog)


@dataclass
class _Found:
    """What the engines found for one question (changed in place by the corrective retrieval)."""

    r_hits: list[TermHit]
    v_all: list[VectorHit]
    v_hits: list[VectorHit]
    few_shots: list[FewShot]
    bindings: list[TermBinding]
    crag: CragResult
    passages: list[tuple[Passage, Asset]] = field(default_factory=list)
    corrected: bool = False


def _conclude_corrective(
    found: _Found, question: str, terms: list[str], v_more: list[VectorHit], s: RetrievalSettings
) -> None:
    """The corrective retrieval's grade: the wiki passages it kept (and whether they share the question's words),
    then the CRAG conclusion over the vector score, the bindings and the tables the passages name."""
    crag = found.crag
    words = [t for t in terms if t not in STOPWORDS]
    crag.passages = [
        {
            "table": a.asset_id,
            "title": p.title,
            "score": round(p.score, 4),
            "ref": p.ref,
            "shares_words": p.shares_words(words),
        }
        for p, a in found.passages
    ]
    top_after = max((h.score for h in v_more), default=0.0)
    named = {a.asset_id for p, a in found.passages if p.shares_words(words)}
    conclude(crag, top_after, len(found.bindings) + len(named), s, missing_terms(terms, found.r_hits, question))


def _dedupe_hits(hits: list[TermHit]) -> list[TermHit]:
    best: dict[tuple[str, str], TermHit] = {}
    for hit in hits:
        key = (hit.term_id, hit.matched)
        if key not in best or hit.score > best[key].score:
            best[key] = hit
    return list(best.values())


def _merge(ctx: RerankContext, r_hits: list[TermHit], v_hits: list[VectorHit]) -> None:
    """Candidates from V (score = cosine) and R (lexical evidence per matched search term)."""
    for v_hit in v_hits:
        ranked = ctx.add(v_hit.asset, "V", v_hit.score)
        ranked.features["v"] = max(ranked.features.get("v", 0.0), v_hit.score)
    for r_hit in r_hits:
        if r_hit.asset is None:
            continue
        ranked = ctx.add(r_hit.asset, "R")
        key = R_PREFIX + r_hit.matched
        ranked.features[key] = max(ranked.features.get(key, 0.0), r_hit.score / r_hit.ambiguity)
        ranked.reasons.append(f"term {r_hit.canonical_term!r} {r_hit.match} match of {r_hit.matched!r}")


def _merge_passages(ctx: RerankContext, passages: list[tuple[Passage, Asset]], admit: float) -> None:
    """Tables the wiki passages are about join the candidates, scored up to the V admission level."""
    best = max((p.score for p, _ in passages), default=0.0)
    for passage, asset in passages:
        score = admit * (passage.score / best if best > 0 else 1.0)
        ranked = ctx.add(asset, "W", score)
        ranked.features["v"] = max(ranked.features.get("v", 0.0), score)
        ranked.score = max(ranked.score, score)
        ranked.reasons.append(f"wiki passage {passage.title!r}")


def _bound_rules(ctx: RerankContext, rules: list[Asset], score: float) -> None:
    """Business rules that apply to a bound asset join the candidates (binding-driven supplement)."""
    bound = {b.mapped_asset_id for b in ctx.bindings}
    for rule in rules:
        applies = set(rule.meta.get("applies_to") or [])
        if applies & bound:
            ranked = ctx.add(rule, "binding", score)
            ranked.bound = True
            ranked.reasons.append(f"applies to bound {', '.join(sorted(applies & bound))}")


def _plan_joins(
    ctx: RerankContext,
    graph: JoinGraph,
    bindings: list[TermBinding],
    few_shots: list[FewShot],
    depth: int,
) -> JoinPlan:
    """Engine G: walk from the found tables, then a join tree over the needed ones (terminals)."""
    evidence = table_evidence(ctx.candidates, ctx.similarity)
    measures_first = sorted(bindings, key=lambda b: b.mapped_asset_type != "metric")
    bound = [t for b in measures_first if (t := table_of(b.mapped_asset_id, b.mapped_asset_type, None))]
    for ranked in ctx.candidates.values():
        if ranked.asset.asset_id in {b.mapped_asset_id for b in bindings} and ranked.asset.table_id:
            bound.append(ranked.asset.table_id)
    shots = [
        f"table:{m.split('.')[0]}"
        for f in few_shots
        if f.cache_hit and f.cube_query
        for key in ("measures", "dimensions")
        for m in f.cube_query.get(key, [])
    ]
    seeds = list(dict.fromkeys(bound + sorted(evidence, key=lambda k: -evidence[k]) + shots))
    neighbours = graph.walk(seeds, depth)
    ranked_tables = sorted(evidence, key=lambda k: -evidence[k])
    terminals = list(dict.fromkeys(bound + shots))
    if ranked_tables:
        top = ranked_tables[0]
        namespace = ctx.tables[top].meta.get("namespace") if top in ctx.tables else None
        for table in ranked_tables:
            if len(terminals) >= MAX_TERMINALS:
                break
            same_space = ctx.tables.get(table) is None or ctx.tables[table].meta.get("namespace") == namespace
            if evidence[table] >= TERMINAL_RATIO * evidence[top] and same_space:
                terminals.append(table)
    terminals = [t for t in dict.fromkeys(terminals) if t in ctx.tables or t in neighbours][:MAX_TERMINALS]
    plan = graph.plan(terminals, depth)
    plan.neighbours = neighbours
    return plan
