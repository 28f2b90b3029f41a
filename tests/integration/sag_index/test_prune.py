"""Re-indexing an edited document replaces its changed sections and keeps the unchanged ones."""

from __future__ import annotations

import pytest

from cubesage_core.db import connection
from cubesage_core.embeddings import get_embedder
from sag_index.loaders import load_markdown
from sag_index.pipeline import index_chunks, prune_sources
from sag_index.processor import FastProcessor
from tests.integration.sag_index.conftest import BACKENDS, fresh_database, make_store

pytestmark = pytest.mark.integration
V1 = "# fact_refund\n\n## Columns\nreason: why\n\n## Joins\norder_id to fact_order\n\n## Old\nobsolete text\n"
V2 = "# fact_refund\n\n## Columns\nreason: why the money went back\n\n## Joins\norder_id to fact_order\n"


@pytest.mark.parametrize("backend", BACKENDS)
def test_edited_document_is_pruned_and_reindexed(backend: str, pg_url: str, request: pytest.FixtureRequest) -> None:
    url = fresh_database(pg_url, "sag_prune")
    store = make_store(backend, request, url)
    emb = get_embedder("hash")
    first = load_markdown(V1, "fact_refund.md")
    index_chunks(first, url, store, FastProcessor(), emb)
    second = load_markdown(V2, "fact_refund.md")
    assert prune_sources(second, url, store) == 2  # the edited Columns section and the deleted Old section
    report = index_chunks(second, url, store, FastProcessor(), emb)
    assert report.chunks_already_indexed == 1 and report.chunks_processed == 1
    with connection(url) as conn:
        texts = [r[0] for r in conn.execute("SELECT text FROM sag.source_chunk ORDER BY position")]
        events = conn.execute("SELECT count(*) FROM sag.event").fetchone()[0]
    assert events == 2 and not any("obsolete" in t for t in texts)
    assert store.count()["events"] == 2
    store.reset()
    store.close()


def test_switching_stores_reindexes_vectors(pg_url: str, request: pytest.FixtureRequest) -> None:
    """Chunks indexed into PostgreSQL (e.g. during an ES outage) get vectors in Elasticsearch later."""
    url = fresh_database(pg_url, "sag_switch")
    emb = get_embedder("hash")
    chunks = load_markdown(V1, "fact_refund.md")
    pg_store = make_store("postgres", request, url)
    assert index_chunks(chunks, url, pg_store, FastProcessor(), emb).chunks_processed == 3
    es_store = make_store("elasticsearch", request, url)
    report = index_chunks(chunks, url, es_store, FastProcessor(), emb)
    assert report.chunks_processed == 3 and report.entities_new > 0
    assert es_store.count()["events"] == 3 and es_store.count()["entities"] == pg_store.count()["entities"]
    with connection(url) as conn:
        assert conn.execute("SELECT count(*) FROM sag.event").fetchone()[0] == 3
    assert index_chunks(chunks, url, es_store, FastProcessor(), emb).chunks_processed == 0
    es_store.reset()
    es_store.close()
    pg_store.close()
