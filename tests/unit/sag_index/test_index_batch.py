"""What one indexing batch embeds: wiki events get vectors, table-row events none (found by names and BM25)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cubesage_core.embeddings import HashEmbedder
from sag_index._stages import filter_extraction, parse_extraction
from sag_index._text import tokenize
from sag_index.loaders import make_chunk
from sag_index.pipeline import build_index_batch
from sag_index.processor import FastProcessor


class CountingEmbedder(HashEmbedder):
    """The hash embedder, remembering every text it was asked to embed."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        return super().embed(texts)


def _records():
    row = make_chunk(
        "shop.customer",
        "customer Ada Lovelace (id 7), city London",
        heading="7",
        kind="row",
        source_type="row",
        meta={
            "title": "customer Ada Lovelace (id 7)",
            "entities": [
                {"name": "Ada Lovelace", "type": "customer", "role": "subject"},
                {"name": "id 7", "type": "key", "embed": False},
            ],
        },
    )
    doc = make_chunk("wiki.md", "The Harbor Library opened in 1901 in Lanzhou.", heading="Harbor Library")
    chunks = [row, doc]
    return [
        parse_extraction(filter_extraction(x, c), c)
        for x, c in zip(FastProcessor().process(chunks), chunks, strict=True)
    ]


def test_row_events_get_no_vectors_and_their_titles_are_not_embedded() -> None:
    sentences, names = CountingEmbedder(), CountingEmbedder()
    batch = build_index_batch(_records(), set(), sentences, names, relation_vectors=False)
    by_kind = {ev.kind: ev for ev in batch.events}
    assert by_kind["row"].title_vec is None and by_kind["row"].content_vec is None
    assert by_kind["row"].tokens == tokenize(f"{by_kind['row'].title}\n{_records()[0].chunk.text}")
    assert by_kind["doc"].title_vec is not None and by_kind["doc"].content_vec is not None
    assert "customer Ada Lovelace (id 7)" not in names.texts + sentences.texts
    assert sentences.texts == [f"{by_kind['doc'].title}. {_records()[1].content}"]


def test_row_names_still_get_name_vectors_and_ids_none() -> None:
    batch = build_index_batch(_records(), set(), CountingEmbedder(), CountingEmbedder(), relation_vectors=False)
    vectors = {en.name: en.name_vec for en in batch.entities}
    assert vectors["Ada Lovelace"] is not None and vectors["id 7"] is None
