"""Multi-hop passage retrieval benchmark: SAG (with and without expansion) vs BM25, dense and RRF.

Data in the HippoRAG formats: HotpotQA-style (``supporting_facts`` + ``{title: [sentences]}``
corpus) or MuSiQue-style (``paragraphs[].is_supporting`` + ``[{title, text}]`` corpus). The
whole corpus is indexed with the fast processor into a separate namespace (its own PostgreSQL
database / its own Elasticsearch index prefix), then every question retrieves over the whole
corpus. Recall@k is HippoRAG's: the fraction of gold supporting titles in the top k, averaged.
Every result line is for one split: the questions are halved into ``dev`` and ``test`` by a fixed
seed (``bench.splits``); indexing and the embedding latency are shared by both. Query latency excludes
the question embedding (timed once, reported as ``embed_ms_p50``, then
cached for every system alike); indexing throughput excludes model loading.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.splits import split_indices
from cubesage_core.settings import Settings, get_settings
from sag_index.backends.base import VectorStore
from sag_index.backends.postgres import PostgresStore
from sag_index.loaders import make_chunk
from sag_index.models import Chunk

if TYPE_CHECKING:
    from cubesage_core.embeddings import Embedder
    from sag_index.pipeline import IndexReport
    from sag_index.retrieval import SagRetriever

BENCH_DB = "cubesage_bench_multihop"
BENCH_NAMESPACE = "bench_multihop_"
KS = (2, 5, 10)


@dataclass
class Question:
    question: str
    gold_titles: set[str]


def load_questions(path: Path) -> list[Question]:
    data = json.loads(path.read_text(encoding="utf-8"))
    out: list[Question] = []
    for item in data:
        if "supporting_facts" in item:
            gold = {str(t) for t, *_ in item["supporting_facts"]}
        elif "paragraphs" in item:
            gold = {str(p["title"]) for p in item["paragraphs"] if p.get("is_supporting")}
        else:
            raise ValueError(f"{path}: question without supporting_facts or paragraphs: {str(item)[:200]}")
        out.append(Question(str(item["question"]), gold))
    return out


def load_corpus(path: Path) -> list[Chunk]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, dict):
        items = [
            (str(title), "".join(sents) if isinstance(sents, list) else str(sents)) for title, sents in data.items()
        ]
    else:
        items = [(str(p["title"]), str(p.get("text") or p.get("paragraph_text") or "")) for p in data]
    return [
        make_chunk(path.name, f"{title}\n{text}", heading=title, position=i, source_type="json")
        for i, (title, text) in enumerate(items)
    ]


def recall_at(ranked_titles: list[str], gold: set[str], k: int) -> float:
    return len(gold & set(ranked_titles[:k])) / len(gold) if gold else 0.0


def score(
    system: Callable[[str], list[str]], questions: list[Question], title_of: dict[str, str]
) -> tuple[dict[int, list[float]], list[float]]:
    """Per question: recall@k of the titles ``system`` ranks, and its query time in ms."""
    recalls: dict[int, list[float]] = {k: [] for k in KS}
    latencies = []
    for q in questions:
        t = time.perf_counter()
        ranked = [title_of[e] for e in system(q.question)]
        latencies.append((time.perf_counter() - t) * 1000)
        for k in KS:
            recalls[k].append(recall_at(ranked, q.gold_titles, k))
    return recalls, latencies


def split_metrics(recalls: dict[int, list[float]], latencies: list[float], idx: list[int]) -> dict[str, Any]:
    """n, R@k and query latency over the questions ``idx`` of one split."""
    ms = [latencies[i] for i in idx]
    return {
        "n": len(idx),
        **{f"R@{k}": round(statistics.mean(v[i] for i in idx), 4) if idx else None for k, v in recalls.items()},
        "query_ms_p50": round(statistics.median(ms), 2) if ms else None,
        "query_ms_p95": round(_p95(ms), 2) if ms else None,
    }


def rrf(*rankings: list[str], k: int = 60) -> list[str]:
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, doc in enumerate(ranking):
            scores[doc] = scores.get(doc, 0.0) + 1.0 / (k + rank + 1)
    return sorted(scores, key=lambda d: -scores[d])


def bench_database(url: str) -> str:
    """A separate database on the same server (created if absent, schema applied)."""
    from cubesage_core.scratch import scratch_database

    return scratch_database(url, BENCH_DB)


def run(
    questions_path: Path,
    corpus_path: Path,
    backend: str | None = None,
    es_url: str | None = None,
    emit: Callable[[dict[str, Any]], None] = lambda row: print(json.dumps(row), flush=True),
    progress: bool = True,
) -> list[dict[str, Any]]:
    from cubesage_core.db import database_url
    from cubesage_core.embeddings import get_embedder
    from sag_index.pipeline import index_chunks
    from sag_index.processor import FastProcessor
    from sag_index.retrieval import SagRetriever

    settings = get_settings()
    backend = backend or ("elasticsearch" if settings.es_url else "postgres")
    questions = load_questions(questions_path)
    chunks = load_corpus(corpus_path)
    title_of = {f"ev_{c.chunk_id}": c.heading for c in chunks}
    url = bench_database(database_url(settings))
    store, es_server = _open_store(backend, url, es_url, settings)
    try:
        _empty(store, url)
        embedder = get_embedder()
        embedder.embed(["warm up"])  # model loading is not indexing: load before the clock starts
        warm_up()
        report = index_chunks(
            chunks,
            url,
            store,
            FastProcessor(),
            embedder,
            progress=progress,
            description=f"indexing {corpus_path.name} ({backend})",
        )
        retriever = SagRetriever(url, store, embedder)
        systems = _systems(retriever, store, embedder)
        rows = _rows(systems, questions, title_of, _embed_ms(embedder, questions), backend, report, emit)
        retriever.close()
        return rows
    finally:
        store.close()
        if es_server is not None:
            es_server.stop()


def _rows(
    systems: dict[str, Callable[[str], list[str]]],
    questions: list[Question],
    title_of: dict[str, str],
    embed_ms: list[float],
    backend: str,
    report: IndexReport,
    emit: Callable[[dict[str, Any]], None],
) -> list[dict[str, Any]]:
    """Each system scored over the questions: one row per split, emitted as it is made."""
    rows = []
    halves = split_indices(len(questions))
    for name, system in systems.items():
        recalls, latencies = score(system, questions, title_of)
        common = {
            "bench": "multihop",
            "system": name,
            "backend": backend,
            "index_chunks_per_s": round(report.chunks_per_s, 1),
            "index_s": round(report.seconds, 2),
            "index_cpu_s": report.cpu_seconds,
            "load_avg_1m": load_average(),
            "embed_ms_p50": round(statistics.median(embed_ms), 2),
        }
        for split, idx in halves.items():
            row = {**common, "split": split, **split_metrics(recalls, latencies, idx)}
            emit(row)
            rows.append(row)
    return rows


def _empty(store: VectorStore, url: str) -> None:
    """The bench namespace emptied: the store's index and the relational SAG tables."""
    from cubesage_core.db import connection

    store.ensure()
    store.reset()
    with connection(url) as conn:
        conn.execute("TRUNCATE sag.source_chunk, sag.event, sag.entity, sag.event_entity CASCADE")


def _systems(retriever: SagRetriever, store: VectorStore, embedder: Embedder) -> dict[str, Callable[[str], list[str]]]:
    """The retrieval systems compared, by name: each maps a question to the event ids it ranks first."""
    from sag_index.retrieval import RetrievalParams

    return {
        "cubesage": lambda q: [e.event_id for e in retriever.retrieve(q, RetrievalParams(top_k=10)).events],
        "cubesage-no-expansion": lambda q: [
            e.event_id for e in retriever.retrieve(q, RetrievalParams(top_k=10, max_hops=0)).events
        ],
        "bm25": lambda q: [h.id for h in store.text_events(_tokens(q), 10)],
        "dense": lambda q: [h.id for h in store.knn_events(embedder.embed_one(q), 10)],
        "rrf": lambda q: rrf(
            [h.id for h in store.text_events(_tokens(q), 20)],
            [h.id for h in store.knn_events(embedder.embed_one(q), 20)],
        )[:10],
    }


def _embed_ms(embedder: Embedder, questions: list[Question]) -> list[float]:
    """Each question's embedding time, in ms: timed once here; every system then reads it from cache."""
    embed_ms = []
    for q in questions:
        t = time.perf_counter()
        embedder.embed_one(q.question)
        embed_ms.append((time.perf_counter() - t) * 1000)
    return embed_ms


def _open_store(backend: str, url: str, es_url: str | None, settings: Settings) -> tuple[VectorStore, Any]:
    """The store under bench, and the Elasticsearch node started for it (None when one was given or the
    backend is PostgreSQL)."""
    if backend == "elasticsearch":
        from sag_index.backends.elasticsearch import ElasticsearchStore

        es_url = es_url or settings.es_url
        es_server = None
        if not es_url:
            es_server = _es_launcher().start_elasticsearch(Path(settings.data_dir) / "bench-es")
            es_url = es_server.url
        return ElasticsearchStore(es_url, prefix=settings.es_index_prefix + BENCH_NAMESPACE), es_server
    if backend == "postgres":
        return PostgresStore(url), None
    raise ValueError(f"unknown backend {backend!r} (postgres or elasticsearch)")


def load_average() -> float | None:
    """The machine's 1-minute load average while the bench ran (a busy shared machine slows every number)."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def _es_launcher():
    """tests/infra/elasticsearch/es_server.py (stdlib only), loaded by path: tests/ is not installed."""
    import importlib.util

    from cubesage_core.settings import REPO_ROOT

    path = REPO_ROOT / "tests" / "infra" / "elasticsearch" / "es_server.py"
    spec = importlib.util.spec_from_file_location("cubesage_es_server", path)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load the Elasticsearch launcher from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def warm_up() -> None:
    from sag_index._text import warm_up as warm_text

    warm_text()


def _tokens(text: str) -> list[str]:
    from sag_index._text import tokenize

    return tokenize(text)


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
