"""Index the warehouse for detail questions: one chunk per wiki section, one per entity row.

Wiki pages (markdown, plain text, HTML) go through the normal pipeline, each linked to the tables it
describes (``sag_index.wiki``). Rows of every *entity table* (a table whose cube has a label column,
as the detail catalog derives it from the Cube model) become JSON-record chunks whose entities are
declared from their name columns, so no extraction runs per row and a name in a question resolves
to its row (a customer's name -> its key).

Cap: at most ``ROW_CAP`` rows per table are indexed. A bigger table indexes the rows whose label is
among PostgreSQL's most common values of that column (``pg_stats.most_common_vals``), then the first
rows by key up to the cap; its names beyond the cap are not resolvable through SAG.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from psycopg import sql

from cubesage_core.db import connection
from cubesage_core.settings import get_settings
from sag_index.backends import get_store
from sag_index.backends.base import VectorStore
from sag_index.loaders import make_chunk
from sag_index.models import Chunk
from sag_index.pipeline import IndexReport, index_chunks, prune_sources
from sag_index.processor import FastProcessor, Processor, load_glossary
from sag_index.wiki import Nouns, load_wiki

log = logging.getLogger(__name__)

ROW_CAP = 20_000
_CJK_LATIN = re.compile(r"^([\u4e00-\u9fff]+) (\S.*)$")


class RowSource(Protocol):
    """One entity table (``router.detail.schema.TableSpec`` is one): where its rows and names are."""

    @property
    def qualified(self) -> str: ...
    @property
    def key(self) -> str: ...
    @property
    def label(self) -> str | None: ...
    @property
    def name_columns(self) -> tuple[str, ...]: ...
    @property
    def columns(self) -> tuple[str, ...]: ...
    @property
    def entity_type(self) -> str: ...


@dataclass(frozen=True)
class WarehouseMap:
    """What indexing needs from the model: names pages may use -> qualified table, the model's nouns per
    qualified table (``sag_index.wiki.Nouns``), and the entity tables."""

    tables: Mapping[str, str] = field(default_factory=dict)
    rows: Sequence[RowSource] = ()
    nouns: Nouns = ()


@dataclass
class WarehouseIndexReport:
    wiki: IndexReport
    rows: IndexReport
    backend: str
    store_fallback: str | None
    seconds: float
    row_counts: dict[str, int] = field(default_factory=dict)
    chunks_pruned: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "store_fallback": self.store_fallback,
            "seconds": round(self.seconds, 2),
            "chunks_pruned": self.chunks_pruned,
            "row_counts": self.row_counts,
            "wiki": self.wiki.as_dict(),
            "rows": self.rows.as_dict(),
        }


def _names(value: str) -> list[str]:
    """'兰州 Lanzhou' -> ['兰州', 'Lanzhou'] (a bilingual value names the row both ways); else [value]."""
    match = _CJK_LATIN.match(value)
    return [match.group(1), match.group(2)] if match else [value]


def _row_chunk(source: RowSource, record: dict[str, Any]) -> Chunk | None:
    key_value, label = record[source.key], record.get(source.label or "")
    if key_value is None or label in (None, ""):
        return None
    shown = ", ".join(
        f"{column} {value}"
        for column, value in record.items()
        if column not in (source.key, source.label) and value not in (None, "")
    )
    text = f"{source.entity_type} {label} ({source.key} {key_value})" + (f", {shown}" if shown else "")
    entities: list[dict[str, Any]] = [{"name": f"{source.key} {key_value}", "type": "key", "embed": False}]
    for column in source.name_columns:
        for name in _names(str(record.get(column) or "")):
            if name:
                entities.insert(0, {"name": name, "type": source.entity_type, "role": "subject"})
    meta = {
        "table": source.qualified,
        "key_column": source.key,
        "key_value": key_value,
        "label": str(label),
        "entity_type": source.entity_type,
        "title": f"{source.entity_type} {label} ({source.key} {key_value})",
        "content": text,
        "entities": entities,
    }
    position = key_value if isinstance(key_value, int) else 0
    return make_chunk(
        source.qualified, text, heading=str(key_value), position=position, source_type="row", kind="row", meta=meta
    )


def _select(conn: Any, source: RowSource, cap: int) -> list[dict[str, Any]]:
    """The rows to index (see the module docstring for the cap)."""
    schema, _, table = source.qualified.rpartition(".")
    columns = list(dict.fromkeys([source.key, *source.name_columns, *source.columns]))
    base = sql.SQL("SELECT {cols} FROM {table}").format(
        cols=sql.SQL(", ").join(map(sql.Identifier, columns)), table=sql.Identifier(schema, table)
    )
    order = sql.SQL(" ORDER BY {key} LIMIT {cap}").format(key=sql.Identifier(source.key), cap=sql.Literal(cap))
    count = conn.execute(
        sql.SQL("SELECT count(*) FROM (SELECT 1 FROM {t} LIMIT {n}) s").format(
            t=sql.Identifier(schema, table), n=sql.Literal(cap + 1)
        )
    ).fetchone()[0]
    if count > cap and source.label:
        common = sql.SQL(
            " WHERE {label}::text = ANY(SELECT unnest(most_common_vals::text::text[]) FROM pg_stats "
            "WHERE schemaname = {s} AND tablename = {t} AND attname = {c})"
        ).format(
            label=sql.Identifier(source.label), s=sql.Literal(schema), t=sql.Literal(table), c=sql.Literal(source.label)
        )
        frequent = conn.execute(base + common + order).fetchall()
        if frequent:
            return [dict(zip(columns, row, strict=True)) for row in frequent]
    return [dict(zip(columns, row, strict=True)) for row in conn.execute(base + order).fetchall()]


def row_chunks(url: str, sources: Sequence[RowSource], cap: int = ROW_CAP) -> list[Chunk]:
    """One chunk per row (at most ``cap`` per table) of every entity table in ``sources``."""
    chunks: list[Chunk] = []
    with connection(url) as conn:
        for source in sources:
            if source.label:
                chunks.extend(c for r in _select(conn, source, cap) if (c := _row_chunk(source, r)) is not None)
    return chunks


def index_warehouse(
    url: str,
    warehouse: WarehouseMap,
    wiki_dir: Path | None = None,
    store: VectorStore | None = None,
    progress: bool | None = None,
    processor: Processor | None = None,
) -> WarehouseIndexReport:
    """Index the wiki pages of ``wiki_dir`` and the entity rows (idempotent and resumable: indexed chunks are
    skipped). Sections edited away or rows deleted since the last run are pruned (chunk, event, vectors)."""
    started = time.monotonic()
    own_store = store is None
    store = store or get_store(get_settings(), url)
    try:
        pages = load_wiki(wiki_dir, warehouse.tables, warehouse.nouns) if wiki_dir is not None else []
        pruned = prune_sources(pages, url, store)
        wiki = index_chunks(
            pages,
            url,
            store,
            processor or _wiki_processor(url),
            progress=bool(progress),
            relation_vectors=True,
            description="table wikis",
        )
        rows = row_chunks(url, warehouse.rows)
        pruned += prune_sources(rows, url, store)
        counts: dict[str, int] = {}
        for chunk in rows:
            counts[chunk.meta["table"]] = counts.get(chunk.meta["table"], 0) + 1
        row_report = index_chunks(
            rows, url, store, FastProcessor(), batch_size=2000, progress=bool(progress), description="dimension rows"
        )
        return WarehouseIndexReport(
            wiki, row_report, store.backend, store.fallback_reason, time.monotonic() - started, counts, pruned
        )
    finally:
        if own_store:
            store.close()


def _wiki_processor(url: str) -> Processor:
    from cubesage_core.llm import get_lm

    glossary = load_glossary(url)
    try:
        lm = get_lm()
    except Exception as err:  # the LM refuses its parameters: index with the fast processor
        log.warning("LLM processor unavailable, indexing wiki pages in fast mode: %s", err)
        lm = None
    if lm is None:
        return FastProcessor(glossary)
    from sag_index.llm_processor import LlmProcessor

    return LlmProcessor(lm, fallback=FastProcessor(glossary))
