"""Index the warehouse for detail questions: one chunk per table-wiki section, one per dimension row.

Wiki pages (``demo_dir/wiki``: markdown, plain text, HTML) go through the normal pipeline; a page
named after a table (``fact_refund.md``, ``dim_region.zh.md``) is attributed to that table, other
pages to the tables they name. Rows of dim_customer, dim_product and dim_region become JSON-record
chunks whose entities are declared from the columns (name, key, city, segment, region...), so no
extraction runs per row and a name in a question resolves to its row (王芳 -> customer_id).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cubesage_core.db import connection
from cubesage_core.settings import get_settings
from sag_index.backends import get_store
from sag_index.backends.base import VectorStore
from sag_index.loaders import load_dir, make_chunk
from sag_index.models import Chunk
from sag_index.pipeline import IndexReport, index_chunks, prune_sources
from sag_index.processor import FastProcessor, Processor, load_glossary

WAREHOUSE_TABLES = ("dim_region", "dim_customer", "dim_product", "fact_order", "fact_order_item",
                    "fact_payment", "fact_refund")
_TABLE_STEM = re.compile(r"^((?:dim|fact)_[a-z_]+?)(?:\.[a-z]{2})?$")


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
        return {"backend": self.backend, "store_fallback": self.store_fallback, "seconds": round(self.seconds, 2),
                "chunks_pruned": self.chunks_pruned,
                "row_counts": self.row_counts, "wiki": self.wiki.as_dict(), "rows": self.rows.as_dict()}


def wiki_chunks(demo_dir: Path, schema: str = "warehouse") -> list[Chunk]:
    """Chunks of every wiki page, each with ``meta["tables"]`` (qualified table names)."""
    chunks = load_dir(demo_dir / "wiki")
    for chunk in chunks:
        stem = Path(chunk.source).name.split(".")[0]
        match = _TABLE_STEM.match(stem)
        if match and match.group(1) in WAREHOUSE_TABLES:
            tables = [match.group(1)]
        else:
            tables = [t for t in WAREHOUSE_TABLES if re.search(rf"\b{t}\b", chunk.text)]
        chunk.meta["tables"] = [f"{schema}.{t}" for t in tables]
    return chunks


def _city_names(city: str) -> list[str]:
    """'兰州 Lanzhou' -> ['兰州', 'Lanzhou']; 'San Francisco' -> ['San Francisco']."""
    parts = city.split(" ", 1)
    if len(parts) == 2 and re.fullmatch(r"[\u4e00-\u9fff]+", parts[0]):
        return parts
    return [city]


def _row_chunk(table: str, key_column: str, key_value: int, label: str, entity_type: str, text: str,
               entities: list[dict[str, Any]], schema: str) -> Chunk:
    qualified = f"{schema}.{table}"
    meta = {"table": qualified, "key_column": key_column, "key_value": key_value, "label": label,
            "entity_type": entity_type, "title": f"{entity_type} {label} ({key_column} {key_value})",
            "content": text, "entities": entities}
    return make_chunk(qualified, text, heading="", position=key_value, source_type="row", kind="row", meta=meta)


def row_chunks(url: str, schema: str = "warehouse") -> list[Chunk]:
    """One chunk per row of dim_region, dim_customer and dim_product."""
    chunks: list[Chunk] = []
    with connection(url) as conn:
        regions = conn.execute(f"SELECT region_id, region_code, name_en, name_zh FROM {schema}.dim_region "
                               "ORDER BY region_id").fetchall()
        region_names = {r[0]: (r[2], r[3]) for r in regions}
        for region_id, code, name_en, name_zh in regions:
            text = f"region {name_en} {name_zh} (region_id {region_id}), region code {code}"
            entities = [{"name": name_en, "type": "region", "role": "subject"},
                        {"name": name_zh, "type": "region", "role": "subject"},
                        {"name": code, "type": "region", "role": "subject"},
                        {"name": f"region_id {region_id}", "type": "key", "embed": False}]
            chunks.append(_row_chunk("dim_region", "region_id", region_id, name_en, "region", text, entities, schema))
        for cid, name, segment, region_id, city, signup in conn.execute(
                f"SELECT customer_id, customer_name, segment, region_id, city, signup_date FROM {schema}.dim_customer "
                "ORDER BY customer_id"):
            en, zh = region_names.get(region_id, ("", ""))
            text = (f"customer {name} (customer_id {cid}), {segment} segment, city {city}, "
                    f"region {region_id} {en} {zh}, signed up {signup}")
            entities = [{"name": name, "type": "customer", "role": "subject"},
                        {"name": f"customer_id {cid}", "type": "key", "embed": False},
                        {"name": segment, "type": "segment", "embed": False},
                        *({"name": c, "type": "city"} for c in _city_names(city)),
                        {"name": en, "type": "region"}]
            chunks.append(_row_chunk("dim_customer", "customer_id", cid, name, "customer", text, entities, schema))
        for pid, name, category, brand, price, launched in conn.execute(
                f"SELECT product_id, product_name, category, brand, unit_price, launched_on FROM {schema}.dim_product "
                "ORDER BY product_id"):
            text = (f"product {name} (product_id {pid}), category {category}, brand {brand}, "
                    f"unit price {price}, launched {launched}")
            entities = [{"name": name, "type": "product", "role": "subject"},
                        {"name": f"product_id {pid}", "type": "key", "embed": False},
                        {"name": category, "type": "category", "embed": False},
                        {"name": brand, "type": "brand"}]
            chunks.append(_row_chunk("dim_product", "product_id", pid, name, "product", text, entities, schema))
    return chunks


def index_warehouse(url: str, demo_dir: Path, store: VectorStore | None = None,
                    progress: bool | None = None, processor: Processor | None = None) -> WarehouseIndexReport:
    """Index the table wikis and dimension rows (idempotent and resumable: indexed chunks are skipped).

    Sections edited away or rows deleted since the last run are pruned (chunk, event, vectors).
    """
    started = time.monotonic()
    settings = get_settings()
    own_store = store is None
    store = store or get_store(settings, url)
    try:
        processor = processor or _wiki_processor(url)
        pages = wiki_chunks(demo_dir, settings.warehouse_schema)
        pruned = prune_sources(pages, url, store)
        wiki = index_chunks(pages, url, store, processor, progress=bool(progress), relation_vectors=True,
                            description="table wikis")
        rows = row_chunks(url, settings.warehouse_schema)
        pruned += prune_sources(rows, url, store)
        counts: dict[str, int] = {}
        for chunk in rows:
            counts[chunk.meta["table"]] = counts.get(chunk.meta["table"], 0) + 1
        row_report = index_chunks(rows, url, store, FastProcessor(), batch_size=2000, progress=bool(progress),
                                  description="dimension rows")
        return WarehouseIndexReport(wiki, row_report, store.backend, store.fallback_reason,
                                    time.monotonic() - started, counts, pruned)
    finally:
        if own_store:
            store.close()


def _wiki_processor(url: str) -> Processor:
    from cubesage_core.llm import get_lm

    glossary = load_glossary(url)
    lm = get_lm()
    if lm is None:
        return FastProcessor(glossary)
    from sag_index.llm_processor import LlmProcessor

    return LlmProcessor(lm, fallback=FastProcessor(glossary))
