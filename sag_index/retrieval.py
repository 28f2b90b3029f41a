"""The 8-step SAG retrieval over the relational index and a vector/BM25 store.

1 NER (dictionary/BM25 fast, or DSPy) -> 2 entity recall (top_k 20, cosine >= 0.9) ->
3 dual-channel event recall (SQL entity->event join, and kNN k=20 plus BM25 k=20) ->
4 event details -> 5 multi-hop expansion over entity<->event (max_hops 1) -> 6 coarse rerank
by vector similarity (max 100 events) -> 7 selection of top_k (numeric formula fast, or DSPy)
-> 8 chunk backtrack (dedupe by chunk id). Every step records its candidates and timing.
Database reads borrow from a checked pool (``cubesage_core.db.pool``; shared with the caller's when given)
and are retried once on a fresh connection when the server dropped theirs.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

from psycopg_pool import ConnectionPool

from cubesage_core import db
from cubesage_core.embeddings import Embedder, get_embedder
from sag_index import repository
from sag_index._ner import fast_ner
from sag_index._text import tokenize
from sag_index.backends.base import VectorStore
from sag_index.errors import NotIndexedError

T = TypeVar("T")
DENSE_KINDS = ("doc",)  # row events carry name vectors (see pipeline.build_index_batch): no dense scoring


@dataclass
class RetrievalParams:
    entity_top_k: int = 20
    entity_threshold: float = 0.9
    event_k: int = 20
    max_hops: int = 1
    expand_from: int = 10          # seeds (best first) whose entities are expanded
    max_events: int = 100
    top_k: int = 10
    max_entity_df: int = 40        # entities linked to more events are hubs: not walked
    kinds: tuple[str, ...] | None = None
    # fast selection formula weights
    w_text: float = 0.5            # BM25 share of the relevance (rest: vector similarity)
    w_entity: float = 0.3          # question entities linked to the event
    w_bridge: float = 0.4          # relevance of a linked event (bridge)
    w_hop: float = 0.05            # penalty per hop


@dataclass
class Candidate:
    event_id: str
    hop: int = 0
    channels: set[str] = field(default_factory=set)
    via: list[str] = field(default_factory=list)
    vector: float = 0.0
    text: float = 0.0
    entity: float = 0.0
    bridge: float = 0.0
    score: float = 0.0


@dataclass
class Step:
    name: str
    ms: float
    candidates: list[dict[str, Any]]
    note: str = ""


@dataclass
class RetrievedEvent:
    event_id: str
    chunk_id: str
    title: str
    content: str
    source: str
    kind: str
    score: float
    hop: int
    meta: dict[str, Any]


@dataclass
class RetrievalResult:
    question: str
    events: list[RetrievedEvent]
    chunks: list[dict[str, Any]]
    steps: list[Step]
    modes: dict[str, str]
    entities: list[dict[str, Any]]

    @property
    def total_ms(self) -> float:
        return sum(s.ms for s in self.steps)

    def explain(self) -> dict[str, Any]:
        return {"question": self.question, "modes": self.modes, "total_ms": round(self.total_ms, 2),
                "steps": [asdict(s) for s in self.steps],
                "events": [{k: v for k, v in asdict(e).items() if k != "meta"} for e in self.events]}


class Retriever:
    """Runs the 8 steps; ``ner`` and ``selector`` may be replaced by the DSPy implementations."""

    def __init__(self, url: str, store: VectorStore, embedder: Embedder | None = None,
                 params: RetrievalParams | None = None, name_embedder: Embedder | None = None,
                 ner: Callable[[str, dict[str, str]], tuple[list[str], list[str], str]] | None = None,
                 selector: Callable[[str, list[Candidate], dict[str, dict], int], tuple[list[str], str]] | None = None,
                 connections: ConnectionPool | None = None) -> None:
        self.url = url
        self.store = store
        self.embedder = embedder or get_embedder()
        if name_embedder is None:
            from sag_index.pipeline import default_name_embedder

            name_embedder = default_name_embedder()
        self.name_embedder = name_embedder
        self.params = params or RetrievalParams()
        self._own_pool = connections is None
        self._pool = connections if connections is not None else db.pool(url, max_size=2, name="sag-retrieval")
        self._dictionary: dict[str, str] | None = None
        self._ner = ner
        self._selector = selector

    def dictionary(self) -> dict[str, str]:
        if self._dictionary is None:
            self._dictionary = self._read(repository.entity_dictionary)
        return self._dictionary

    def _read(self, query: Callable[..., T], *args: Any) -> T:
        return db.read(self._pool, lambda conn: query(conn, *args))

    def refresh(self) -> None:
        self._dictionary = None

    def close(self) -> None:
        if self._own_pool:
            self._pool.close()

    def retrieve(self, question: str, params: RetrievalParams | None = None) -> RetrievalResult:
        p = params or self.params
        steps: list[Step] = []
        clock = time.perf_counter()

        def done(name: str, candidates: list[dict[str, Any]], note: str = "") -> None:
            nonlocal clock
            now = time.perf_counter()
            steps.append(Step(name, round((now - clock) * 1000, 3), candidates[:50], note))
            clock = now

        dictionary = self.dictionary()
        if not dictionary:
            raise NotIndexedError("the SAG index is empty: run `cubesage sag index` first")
        # Step 1: NER
        if self._ner is not None:
            exact_ids, free, ner_mode = self._ner(question, dictionary)
        else:
            (exact_ids, free), ner_mode = fast_ner(question, dictionary), "fast"
        done("1_ner", [{"entity_id": e} for e in exact_ids] + [{"mention": m} for m in free],
             f"{len(exact_ids)} dictionary hits, {len(free)} free mentions")

        # Step 2: entity recall (exact names score 1.0; free mentions by name vector >= threshold)
        qvec = self.embedder.embed_one(question)
        entity_scores: dict[str, float] = dict.fromkeys(exact_ids, 1.0)
        if free:
            vectors = self.name_embedder.embed(free)
            hit_lists = self.store.knn_entities_many(list(vectors), p.entity_top_k, p.entity_threshold,
                                                     [tokenize(m) for m in free])
            for hits in hit_lists:
                for hit in hits:
                    entity_scores[hit.id] = max(entity_scores.get(hit.id, 0.0), hit.score)
        done("2_entity_recall", [{"entity_id": k, "score": round(v, 4)} for k, v in entity_scores.items()],
             "timing includes embedding the question (cached per process)")

        # Step 3: dual-channel event recall
        cands: dict[str, Candidate] = {}
        links = self._read(repository.events_of_entities, list(entity_scores), p.max_entity_df)
        df: dict[str, int] = defaultdict(int)
        for _, entity_id, _ in links:
            df[entity_id] += 1
        for event_id, entity_id, role in links:
            c = cands.setdefault(event_id, Candidate(event_id))
            c.channels.add("entity")
            weight = entity_scores[entity_id] / math.log2(1 + df[entity_id])
            c.entity += weight * (1.0 if role == "subject" else 0.5)
            c.via.append(entity_id)
        kinds = list(p.kinds) if p.kinds else None
        dense_kinds = [k for k in (kinds or DENSE_KINDS) if k in DENSE_KINDS]
        qtokens = tokenize(question)
        knn_hits, text_hits = self.store.recall_events(qvec, qtokens, p.event_k, dense_kinds, kinds)
        for hit in knn_hits:
            cands.setdefault(hit.id, Candidate(hit.id)).channels.add("knn")
        for hit in text_hits:
            cands.setdefault(hit.id, Candidate(hit.id)).channels.add("bm25")
        if kinds and links:
            allowed = set(self._kinds_of(list(cands), kinds))
            cands = {k: v for k, v in cands.items() if k in allowed}
        done("3_event_recall", [_brief(c) for c in cands.values()],
             f"{sum('entity' in c.channels for c in cands.values())} by entity join, "
             f"{sum(bool(c.channels & {'knn', 'bm25'}) for c in cands.values())} by kNN/BM25")

        # Step 4: event details (kind, and the entities of every seed)
        kind_of = self._read(repository.event_kinds, list(cands))
        seed_links = self._read(repository.entities_of_events, list(cands))
        event_entities: dict[str, dict[str, str]] = defaultdict(dict)
        for event_id, entity_id, role in seed_links:
            event_entities[event_id][entity_id] = role
        done("4_event_details", [{"event_id": k, "entities": len(v)} for k, v in event_entities.items()])

        # Step 6 needs first-stage relevance of seeds to pick what to expand
        self._score_relevance(qvec, qtokens, cands, p, kind_of)
        # Step 5: multi-hop expansion over entity <-> event
        graph: dict[str, set[str]] = defaultdict(set)
        frontier = sorted(cands.values(), key=lambda c: c.score, reverse=True)[: p.expand_from]
        for hop in range(1, p.max_hops + 1):
            walk_entities = {en for c in frontier for en in event_entities.get(c.event_id, {})}
            reached = self._read(repository.events_of_entities, list(walk_entities), p.max_entity_df)
            by_entity: dict[str, list[tuple[str, str]]] = defaultdict(list)
            for event_id, entity_id, role in reached:
                by_entity[entity_id].append((event_id, role))
                event_entities[event_id].setdefault(entity_id, role)
            new: list[Candidate] = []
            for seed in frontier:
                for entity_id, seed_role in event_entities.get(seed.event_id, {}).items():
                    for event_id, role in by_entity.get(entity_id, []):
                        # a bridge: the shared entity is the subject of one side (X mentions Y's topic)
                        if event_id == seed.event_id or (role != "subject" and seed_role != "subject"):
                            continue
                        graph[event_id].add(seed.event_id)
                        graph[seed.event_id].add(event_id)
                        if event_id not in cands:
                            c = Candidate(event_id, hop=hop, channels={"expansion"}, via=[entity_id])
                            cands[event_id] = c
                            new.append(c)
            if kinds and new:
                allowed = set(self._kinds_of([c.event_id for c in new], kinds))
                for c in new:
                    if c.event_id not in allowed:
                        cands.pop(c.event_id, None)
                new = [c for c in new if c.event_id in allowed]
            frontier = new
        expanded = [c for c in cands.values() if c.hop > 0]
        done("5_multihop_expansion", [_brief(c) for c in expanded],
             f"{len(expanded)} events injected over {p.max_hops} hop(s)")

        # Step 6: coarse rerank by vector similarity, keep max_events
        kind_of.update(self._read(repository.event_kinds, [c.event_id for c in expanded]))
        self._score_relevance(qvec, qtokens, cands, p, kind_of, only=[c.event_id for c in expanded])
        pool = sorted(cands.values(), key=lambda c: c.vector, reverse=True)[: p.max_events]
        done("6_coarse_rerank", [_brief(c) for c in pool], f"{len(pool)} of {len(cands)} kept")

        # Step 7: selection
        pool_ids = {c.event_id for c in pool}
        for c in pool:
            linked = [cands[o].score for o in graph.get(c.event_id, ()) if o in pool_ids]
            c.bridge = max(linked, default=0.0)
        details = self._read(repository.event_details, [c.event_id for c in pool])
        if self._selector is not None:
            chosen, select_mode = self._selector(question, pool, details, p.top_k)
        else:
            chosen, select_mode = self.select_fast(pool, p.top_k, p), "fast"
        done("7_selection", [_brief(cands[e]) for e in chosen], f"mode {select_mode}")

        # Step 8: chunk backtrack
        events: list[RetrievedEvent] = []
        seen_chunks: set[str] = set()
        for event_id in chosen:
            d = details.get(event_id)
            if d is None or d["chunk_id"] in seen_chunks:
                continue
            seen_chunks.add(d["chunk_id"])
            c = cands[event_id]
            events.append(RetrievedEvent(event_id, d["chunk_id"], d["title"], d["content"], d["source"],
                                         d["kind"], round(self.fast_score(c, p), 4), c.hop, d["meta"]))
        chunk_rows = self._read(repository.chunks_by_id, [e.chunk_id for e in events])
        chunks = [{"chunk_id": e.chunk_id, **chunk_rows[e.chunk_id]} for e in events if e.chunk_id in chunk_rows]
        done("8_chunk_backtrack", [{"chunk_id": ch["chunk_id"], "source": ch["source"]} for ch in chunks])
        entity_info = [{"entity_id": k, "score": round(v, 4)} for k, v in entity_scores.items()]
        return RetrievalResult(question, events, chunks, steps, {"ner": ner_mode, "selection": select_mode},
                               entity_info)

    # -- scoring ----------------------------------------------------------------------------------
    def _score_relevance(self, qvec: Any, qtokens: Sequence[str], cands: dict[str, Candidate],
                         p: RetrievalParams, kind_of: dict[str, str], only: Sequence[str] | None = None) -> None:
        """Relevance = BM25 share + vector share (documents only: row vectors embed names) + entities."""
        ids = list(only) if only is not None else list(cands)
        if ids:
            dense_ids = [i for i in ids if kind_of.get(i, "doc") in DENSE_KINDS]
            vector_scores, text_hits = self.store.hybrid_scores(qvec, dense_ids, qtokens, ids)
            for event_id, score in vector_scores.items():
                cands[event_id].vector = score
            for hit in text_hits:
                cands[hit.id].text = hit.score
        values = list(cands.values())
        max_text = max((c.text for c in values), default=0.0) or 1.0
        dense = [c.vector for c in values if kind_of.get(c.event_id, "doc") in DENSE_KINDS]
        vmax, vmin = max(dense, default=0.0), min(dense, default=0.0)
        span = (vmax - vmin) or 1.0
        max_entity = max((c.entity for c in values), default=0.0) or 1.0
        for c in values:
            vec_share = (c.vector - vmin) / span if kind_of.get(c.event_id, "doc") in DENSE_KINDS else 0.0
            rel = p.w_text * c.text / max_text + (1 - p.w_text) * vec_share
            c.score = rel + p.w_entity * c.entity / max_entity

    def fast_score(self, c: Candidate, p: RetrievalParams | None = None) -> float:
        """Step 7's formula: relevance (BM25 + vector + question entities) + bridge bonus - hop penalty."""
        p = p or self.params
        return c.score + p.w_bridge * c.bridge - p.w_hop * c.hop

    def select_fast(self, pool: list[Candidate], top_k: int, p: RetrievalParams | None = None) -> list[str]:
        """Step 7 fast: the ``fast_score`` ranking (the candidates are left as they are)."""
        return [c.event_id for c in sorted(pool, key=lambda c: self.fast_score(c, p), reverse=True)[:top_k]]

    @classmethod
    def with_llm(cls, url: str, store: VectorStore, selection_tokens: int = 1500, **kwargs: Any) -> Retriever:
        """A retriever whose Step 1 and Step 7 run through DSPy when LLM mode is on (``cubesage_core.llm``:
        the active settings and question), the fast steps otherwise and on any LLM failure."""
        from sag_index.llm_steps import llm_ner, llm_selector

        retriever = cls(url, store, ner=llm_ner(), **kwargs)
        retriever._selector = llm_selector(retriever.select_fast, selection_tokens, retriever.fast_score)
        return retriever

    def _kinds_of(self, event_ids: list[str], kinds: list[str]) -> list[str]:
        rows = self._read(lambda conn: conn.execute(
            "SELECT e.event_id FROM sag.event e JOIN sag.source_chunk c USING (chunk_id) "
            "WHERE e.event_id = ANY(%s) AND c.kind = ANY(%s)", (event_ids, kinds)).fetchall())
        return [r[0] for r in rows]


def _brief(c: Candidate) -> dict[str, Any]:
    return {"event_id": c.event_id, "hop": c.hop, "channels": sorted(c.channels), "via": c.via[:5],
            "vector": round(c.vector, 4),
            "text": round(c.text, 4), "entity": round(c.entity, 4), "bridge": round(c.bridge, 4),
            "score": round(c.score, 4)}
