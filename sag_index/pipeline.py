"""Indexing pipeline ``chunks -> processor -> filter -> parser -> saver``, batched and resumable.

Chunks are first registered as ``pending`` (ids are content hashes, so nothing is registered
twice). Each batch is processed, filtered, parsed, embedded and saved: vectors go to the store
(idempotent upserts by id) while one PostgreSQL transaction writes events, entities and links;
that transaction marks the chunks ``indexed`` once the vectors are committed. A crash loses at
most the batch in flight, which the next run picks up again; no chunk gets a second event.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from cubesage_core.db import connection
from cubesage_core.embeddings import Embedder, get_embedder
from sag_index import repository
from sag_index._run_settings import indexing_run
from sag_index._stages import filter_extraction, parse_extraction
from sag_index._text import tokenize
from sag_index.backends.base import EntityDoc, EventDoc, IndexBatch, LinkDoc, VectorStore
from sag_index.models import Chunk, EventRecord
from sag_index.processor import FastProcessor, Processor

ANALYZE_AFTER = 5000  # chunks indexed in one run before planner statistics are refreshed


@dataclass
class IndexReport:
    chunks_total: int = 0
    chunks_new: int = 0
    chunks_processed: int = 0
    chunks_already_indexed: int = 0
    events_written: int = 0
    entities_new: int = 0
    fallbacks: int = 0
    mode: str = "fast"
    backend: str = ""
    store_fallback: str | None = None
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # CPU time of this process (all its threads; the database server's is not in it)
    stage_seconds: dict[str, float] = field(default_factory=dict)

    @property
    def chunks_per_s(self) -> float:
        return self.chunks_processed / self.seconds if self.seconds else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "chunks_per_s": round(self.chunks_per_s, 1),
            "chunks_per_cpu_s": round(self.chunks_processed / self.cpu_seconds, 1) if self.cpu_seconds else 0.0,
        }


def index_chunks(
    chunks: Sequence[Chunk],
    url: str,
    store: VectorStore,
    processor: Processor | None = None,
    embedder: Embedder | None = None,
    batch_size: int = 256,
    progress: bool = False,
    relation_vectors: bool = False,
    description: str = "indexing",
    name_embedder: Embedder | None = None,
) -> IndexReport:
    """Index ``chunks`` into the relational tables at ``url`` and into ``store``; skip indexed ones.

    Stages overlap: while one batch is written (store upsert and the relational transaction at once, each on
    a connection of its own), the next is processed and embedded (numpy releases the GIL while it embeds,
    PostgreSQL works in its own processes), so a run costs about the longer of its embedding and its writes.
    """
    started, cpu_started = time.monotonic(), time.process_time()
    processor = processor or FastProcessor()
    embedder = embedder or get_embedder()
    name_embedder = name_embedder or default_name_embedder()
    unique = list({c.chunk_id: c for c in chunks}.values())
    report = IndexReport(
        chunks_total=len(unique), mode=processor.mode, backend=store.backend, store_fallback=store.fallback_reason
    )
    timing = {"register": 0.0, "process": 0.0, "filter_parse": 0.0, "lookup": 0.0, "embed": 0.0, "save": 0.0}
    with (
        indexing_run(),
        connection(url) as conn,
        connection(url) as writer,
        ThreadPoolExecutor(1, "sag-save") as saving,
        ThreadPoolExecutor(1, "sag-vectors") as vectors_thread,
        ThreadPoolExecutor(1, "sag-parse") as parsing,
    ):
        todo = _register(conn, unique, store, report, timing)
        bar = _progress(progress, description, len(todo))
        sent: set[str] = set()  # entities of batches handed to the writer (not yet visible to the lookup)
        in_flight: Future[None] | None = None
        try:
            for batch, records in _parsed_batches(todo, batch_size, processor, parsing, timing, report):
                index_batch = _prepare(records, conn, store, embedder, name_embedder, relation_vectors, sent, timing)
                if in_flight is not None:
                    in_flight.result()
                in_flight = saving.submit(_save, writer, store, records, index_batch, timing, vectors_thread)
                _count(report, batch, records, index_batch, bar)
            _drain(in_flight, conn, store, report)
        except BaseException:
            with contextlib.suppress(Exception):
                store.flush()  # what was written before the failure becomes searchable (stores may defer it)
            raise
        finally:
            if bar is not None:
                bar[0].stop()
    return _timed(report, started, cpu_started, timing)


def _register(
    conn: Any, unique: list[Chunk], store: VectorStore, report: IndexReport, timing: dict[str, float]
) -> list[Chunk]:
    """Register the chunks as pending (new ones counted); the ones the store does not hold yet, to index."""
    t = time.monotonic()
    report.chunks_new = repository.register_chunks(conn, unique)
    pending = repository.pending_ids(conn, [c.chunk_id for c in unique], store.key)
    todo = [c for c in unique if c.chunk_id in pending]
    report.chunks_already_indexed = len(unique) - len(todo)
    timing["register"] += time.monotonic() - t
    return todo


def _count(
    report: IndexReport, batch: Sequence[Chunk], records: list[EventRecord], index_batch: IndexBatch, bar: Any
) -> None:
    """A batch handed to the writer: counted, and the progress bar advanced."""
    report.chunks_processed += len(batch)
    report.events_written += len(records)
    report.entities_new += len(index_batch.entities)
    if bar is not None:
        bar[0].advance(bar[1], len(batch))


def _drain(in_flight: Future[None] | None, conn: Any, store: VectorStore, report: IndexReport) -> None:
    """After the last batch: its write waited for, the store flushed, planner statistics refreshed after a big
    run."""
    if in_flight is not None:
        in_flight.result()
    store.flush()
    if report.chunks_processed >= ANALYZE_AFTER:
        repository.analyze(conn)


def _timed(report: IndexReport, started: float, cpu_started: float, timing: dict[str, float]) -> IndexReport:
    """The report with the run's wall and CPU time and each stage's time."""
    report.seconds = time.monotonic() - started
    report.cpu_seconds = round(time.process_time() - cpu_started, 3)
    report.stage_seconds = {k: round(v, 3) for k, v in timing.items()}
    return report


def _parsed_batches(
    todo: Sequence[Chunk],
    batch_size: int,
    processor: Processor,
    pool: ThreadPoolExecutor,
    timing: dict[str, float],
    report: IndexReport,
) -> Iterator[tuple[Sequence[Chunk], list[EventRecord]]]:
    """The batches of ``todo`` with their records, each processed, filtered and parsed on ``pool`` while the
    caller embeds and saves the one before (parsing is Python; the encoder's matrix products and the database
    work it overlaps leave the GIL free), so the processor's time hides behind the encoder's."""
    batches = [todo[start : start + batch_size] for start in range(0, len(todo), batch_size)]
    ahead = pool.submit(_parse, batches[0], processor, timing) if batches else None
    for i, batch in enumerate(batches):
        assert ahead is not None
        records, fallbacks = ahead.result()
        ahead = pool.submit(_parse, batches[i + 1], processor, timing) if i + 1 < len(batches) else None
        report.fallbacks += fallbacks
        yield batch, records


def _parse(batch: Sequence[Chunk], processor: Processor, timing: dict[str, float]) -> tuple[list[EventRecord], int]:
    """Process, filter and parse one batch: its records and how many extractions fell back."""
    t = time.monotonic()
    extractions = processor.process(batch)
    timing["process"] += time.monotonic() - t
    t = time.monotonic()
    records = [parse_extraction(filter_extraction(x, c), c) for x, c in zip(extractions, batch, strict=True)]
    timing["filter_parse"] += time.monotonic() - t
    return records, sum(1 for x in extractions if x.fallback_reason)


def _prepare(
    records: list[EventRecord],
    conn: Any,
    store: VectorStore,
    embedder: Embedder,
    name_embedder: Embedder,
    relation_vectors: bool,
    sent: set[str],
    timing: dict[str, float],
) -> IndexBatch:
    """Embed one parsed batch (entities the store holds, or that an earlier batch of this run sent, are not
    embedded again)."""
    t = time.monotonic()
    ids = {e.entity_id for r in records for e in r.entities}
    known = repository.known_entities(conn, ids - sent, store.key) | (ids & sent)
    sent |= ids
    timing["lookup"] += time.monotonic() - t
    t = time.monotonic()
    index_batch = build_index_batch(records, known, embedder, name_embedder, relation_vectors)
    timing["embed"] += time.monotonic() - t
    return index_batch


def _save(
    writer: Any,
    store: VectorStore,
    records: list[EventRecord],
    index_batch: IndexBatch,
    timing: dict[str, float],
    vectors_thread: ThreadPoolExecutor,
) -> None:
    """The vectors (idempotent upserts by id, on a thread of their own) and the relational rows at once; the
    relational transaction marks the chunks indexed only once the vectors are committed."""
    t = time.monotonic()
    upserted = vectors_thread.submit(store.upsert, index_batch)
    try:
        repository.save_events(writer, records, store.key, vectors_committed=upserted.result)
    finally:
        wait([upserted])  # a failed relational write: the vectors are not left being written
    timing["save"] += time.monotonic() - t


def default_name_embedder() -> Embedder:
    """The embedder of entity names (settings.sag_name_embedding; character n-grams by default)."""
    from cubesage_core.settings import get_settings

    return get_embedder(get_settings().sag_name_embedding)


def prune_sources(chunks: Sequence[Chunk], url: str, store: VectorStore) -> int:
    """Remove indexed chunks of the same sources that ``chunks`` no longer contains (edited documents).

    Vectors are deleted first, then the relational rows: a crash in between leaves relational rows
    that the next prune deletes again. Returns the number of chunks removed.
    """
    sources = sorted({c.source for c in chunks})
    with connection(url) as conn:
        stale = repository.stale_chunks(conn, sources, [c.chunk_id for c in chunks])
        if stale:
            store.delete_events([f"ev_{chunk_id}" for chunk_id in stale])
            repository.delete_chunks(conn, stale)
    return len(stale)


def build_index_batch(
    records: Sequence[EventRecord],
    known_entity_ids: set[str],
    embedder: Embedder,
    name_embedder: Embedder,
    relation_vectors: bool,
) -> IndexBatch:
    """Embed what the store needs: event title and title+content, new entity names, link descriptions.

    Only a wiki event's title+content gets a sentence embedding: it is the vector dense retrieval searches,
    and the sentence encoder is most of an indexing run's CPU. Titles are names: their vectors come from
    ``name_embedder``, as entity names' do. Table rows are matched by surface form (their entities' names
    and ids, BM25 over their text), never by their own vectors (retrieval keeps them out of the dense
    channel): a row event gets no vectors, so 20,000 rows write no 4 KB of floats each. Ids, dates and
    numbers are matched exactly and get no name vector (see ``default_name_embedder``).

    The sentence encoder runs on a thread of its own while this one embeds names and tokenizes (the encoder's
    matrix products release the GIL): the name work no longer waits in line before the encoder.
    """
    docs = [r for r in records if r.chunk.kind != "row"]
    rows = [r for r in records if r.chunk.kind == "row"]
    links = [ln for r in docs for ln in r.links] if relation_vectors else []
    texts = [f"{r.title}. {r.content}" for r in docs] + [ln.description for ln in links]
    with ThreadPoolExecutor(1, "sag-encode") as encoding:
        encoded = encoding.submit(_sentence_vectors, embedder, texts)
        batch = IndexBatch(entities=_entity_docs(records, known_entity_ids, name_embedder))
        title_vectors = name_embedder.embed([r.title for r in docs])
        doc_tokens = [tokenize(r.tokens_text) for r in docs]
        batch.events = [_event_doc(r, tokenize(r.tokens_text)) for r in rows]
        vectors = encoded.result()
    batch.events[:0] = [_event_doc(r, doc_tokens[i], title_vectors[i], vectors[i]) for i, r in enumerate(docs)]
    batch.links = [
        LinkDoc(ln.event_id, ln.entity_id, ln.description, vectors[len(docs) + i]) for i, ln in enumerate(links)
    ]
    return batch


def _event_doc(
    r: EventRecord, tokens: list[str], title_vec: np.ndarray | None = None, content_vec: np.ndarray | None = None
) -> EventDoc:
    return EventDoc(r.event_id, r.chunk.chunk_id, r.chunk.kind, r.title, tokens, title_vec, content_vec)


def _sentence_vectors(embedder: Embedder, texts: list[str]) -> np.ndarray:
    return embedder.embed(texts) if texts else np.zeros((0, embedder.dim), dtype=np.float32)


def _entity_docs(
    records: Sequence[EventRecord], known_entity_ids: set[str], name_embedder: Embedder
) -> list[EntityDoc]:
    """The batch's entities the store does not hold yet, with name vectors for those embedded by name."""
    new_entities = {e.entity_id: e for r in records for e in r.entities if e.entity_id not in known_entity_ids}
    embedded_names = [e for e in new_entities.values() if e.embed]
    name_vectors = {}
    if embedded_names:
        vecs = name_embedder.embed([e.name for e in embedded_names])
        name_vectors = {e.entity_id: vecs[i] for i, e in enumerate(embedded_names)}
    return [
        EntityDoc(eid, e.name, e.normalized, e.type, tokenize(e.name), name_vectors.get(eid))
        for eid, e in new_entities.items()
    ]


def _progress(enabled: bool, description: str, total: int):
    if not enabled:
        return None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    bar = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        transient=False,
        console=Console(stderr=True),
    )
    task = bar.add_task(description, total=total)
    bar.start()
    return bar, task
