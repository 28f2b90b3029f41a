"""What the SAG retrieval steps share: the parameters, the candidates, the run's state and the services.

A step is a function ``(services, run) -> (candidates, note)``: it reads what earlier steps left in the
:class:`Run`, adds its own part and reports the candidates (and a note) its trace entry shows.
``Services`` is the port a step reaches the index through (``sag_index.retrieval.SagRetriever`` implements it).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, TypeVar

import numpy as np

from sag_index.backends.base import VectorStore

T = TypeVar("T")
DENSE_KINDS = ("doc",)  # row events carry name vectors (see pipeline.build_index_batch): no dense scoring
Details = dict[str, dict[str, Any]]  # event id -> chunk id, title, content, source, kind, meta
Report = tuple[list[dict[str, Any]], str]  # a step's traced candidates and its note


@dataclass
class RetrievalParams:
    entity_top_k: int = 20
    entity_threshold: float = 0.9
    event_k: int = 20
    max_hops: int = 1
    expand_from: int = 10  # seeds (best first) whose entities are expanded
    max_events: int = 100
    top_k: int = 10
    max_entity_df: int = 40  # entities linked to more events are hubs: not walked
    kinds: tuple[str, ...] | None = None
    # fast selection formula weights
    w_text: float = 0.5  # BM25 share of the relevance (rest: vector similarity)
    w_entity: float = 0.3  # question entities linked to the event
    w_bridge: float = 0.4  # relevance of a linked event (bridge)
    w_hop: float = 0.05  # penalty per hop


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
class Run:
    """One retrieval's state, filled step by step."""

    question: str
    params: RetrievalParams
    dictionary: dict[str, str]
    modes: dict[str, str] = field(default_factory=dict)  # ner / selection: fast or llm
    exact_ids: list[str] = field(default_factory=list)  # step 1
    free: list[str] = field(default_factory=list)
    qvec: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float32))  # step 2: the question's
    entity_scores: dict[str, float] = field(default_factory=dict)
    qtokens: list[str] = field(default_factory=list)  # step 3
    kinds: list[str] | None = None
    links: list[tuple[str, str, str]] = field(default_factory=list)
    cands: dict[str, Candidate] = field(default_factory=dict)
    kind_of: dict[str, str] = field(default_factory=dict)  # step 4
    event_entities: defaultdict[str, dict[str, str]] = field(default_factory=lambda: defaultdict(dict))
    graph: defaultdict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # step 5
    expanded: list[Candidate] = field(default_factory=list)
    pool: list[Candidate] = field(default_factory=list)  # step 6
    details: Details = field(default_factory=dict)  # step 7
    chosen: list[str] = field(default_factory=list)
    events: list[RetrievedEvent] = field(default_factory=list)  # step 8
    chunks: list[dict[str, Any]] = field(default_factory=list)


class Services(Protocol):
    """The index and the models a step uses."""

    store: VectorStore

    def embed_question(self, question: str) -> np.ndarray: ...
    def embed_names(self, names: list[str]) -> np.ndarray: ...
    def read(self, query: Callable[..., T], *args: Any) -> T: ...
    def ner(self, question: str, dictionary: dict[str, str]) -> tuple[list[str], list[str], str]: ...
    def select(
        self, question: str, pool: list[Candidate], details: Details, params: RetrievalParams
    ) -> tuple[list[str], str]: ...
    def fast_score(self, c: Candidate, p: RetrievalParams | None = None) -> float: ...


class RetrievalStep(NamedTuple):
    name: str  # the trace's step name, "1_ner" ...
    run: Callable[[Services, Run], Report]


def brief(c: Candidate) -> dict[str, Any]:
    """A candidate as a trace shows it."""
    return {
        "event_id": c.event_id,
        "hop": c.hop,
        "channels": sorted(c.channels),
        "via": c.via[:5],
        "vector": round(c.vector, 4),
        "text": round(c.text, 4),
        "entity": round(c.entity, 4),
        "bridge": round(c.bridge, 4),
        "score": round(c.score, 4),
    }


def kinds_of(services: Services, event_ids: list[str], kinds: list[str]) -> list[str]:
    """The events among ``event_ids`` whose chunk is of one of ``kinds``."""
    rows = services.read(
        lambda conn: conn.execute(
            "SELECT e.event_id FROM sag.event e JOIN sag.source_chunk c USING (chunk_id) "
            "WHERE e.event_id = ANY(%s) AND c.kind = ANY(%s)",
            (event_ids, kinds),
        ).fetchall()
    )
    return [r[0] for r in rows]


def score_relevance(services: Services, run: Run, only: list[str] | None = None) -> None:
    """Relevance = BM25 share + vector share (documents only: row vectors embed names) + entities."""
    cands, p, kind_of = run.cands, run.params, run.kind_of
    ids = list(only) if only is not None else list(cands)
    if ids:
        dense_ids = [i for i in ids if kind_of.get(i, "doc") in DENSE_KINDS]
        vector_scores, text_hits = services.store.hybrid_scores(run.qvec, dense_ids, run.qtokens, ids)
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
