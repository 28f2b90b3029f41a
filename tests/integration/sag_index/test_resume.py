"""Kill an indexing subprocess midway, rerun: every chunk indexed once, no duplicate events, none lost."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from cubesage_core.db import connection
from cubesage_core.embeddings import get_embedder
from sag_index.pipeline import index_chunks
from sag_index.processor import FastProcessor
from tests.integration.sag_index.conftest import BACKENDS, fresh_database

pytestmark = pytest.mark.integration
N_CHUNKS = 400

SCRIPT = textwrap.dedent("""
    import sys, time
    from sag_index.backends.postgres import PostgresStore
    from sag_index.backends.elasticsearch import ElasticsearchStore
    from sag_index.pipeline import index_chunks
    from sag_index.processor import FastProcessor
    from tests.integration.sag_index.test_resume import corpus

    url, backend, es_url, prefix = sys.argv[1:5]
    store = PostgresStore(url) if backend == "postgres" else ElasticsearchStore(es_url, prefix=prefix)
    store.ensure()

    class Slow(FastProcessor):
        def process(self, chunks):
            out = super().process(chunks)
            print("batch", flush=True)
            time.sleep(0.2)
            return out

    index_chunks(corpus(), url, store, Slow(), batch_size=20)
    print("finished", flush=True)
""")


def corpus() -> list:
    from sag_index.loaders import make_chunk

    return [
        make_chunk(
            "resume-test",
            f"Person {i} Smith met Person {i + 1} Smith in City {i % 7}. They founded Company {i} in {1900 + i}.",
            heading=f"Person {i} Smith",
        )
        for i in range(N_CHUNKS)
    ]


def _counts(url: str) -> tuple[int, int, int, int]:
    with connection(url) as conn:
        return conn.execute(
            """SELECT (SELECT count(*) FROM sag.source_chunk WHERE status = 'indexed'),
                      (SELECT count(*) FROM sag.source_chunk WHERE status = 'pending'),
                      (SELECT count(*) FROM sag.event),
                      (SELECT count(DISTINCT chunk_id) FROM sag.event)"""
        ).fetchone()


@pytest.mark.parametrize("backend", BACKENDS)
def test_kill_midway_and_resume(backend: str, pg_url: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    url = fresh_database(pg_url, "sag_resume")
    es_url = request.getfixturevalue("es_url") if backend == "elasticsearch" else ""
    prefix = f"sagresume_{uuid.uuid4().hex[:8]}_"
    env = {**os.environ, "CUBESAGE_EMBEDDING_BACKEND": "hash", "PYTHONPATH": str(Path.cwd())}
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, url, backend, es_url, prefix],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parents[3],
    )
    batches = 0
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.strip() == "batch":
            batches += 1
            if batches == 6:
                proc.send_signal(signal.SIGKILL)
                break
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL

    indexed, pending, events, distinct = _counts(url)
    assert 0 < indexed < N_CHUNKS and indexed + pending == N_CHUNKS  # every chunk registered, some done
    assert events == distinct == indexed

    if backend == "postgres":
        from sag_index.backends.postgres import PostgresStore

        store = PostgresStore(url)
    else:
        from sag_index.backends.elasticsearch import ElasticsearchStore

        store = ElasticsearchStore(es_url, prefix=prefix)
    report = index_chunks(corpus(), url, store, FastProcessor(), get_embedder("hash"), batch_size=50)
    assert report.chunks_already_indexed == indexed
    assert report.chunks_processed == pending
    indexed, pending, events, distinct = _counts(url)
    assert (indexed, pending, events, distinct) == (N_CHUNKS, 0, N_CHUNKS, N_CHUNKS)
    assert store.count()["events"] == N_CHUNKS
    again = index_chunks(corpus(), url, store, FastProcessor(), get_embedder("hash"))
    assert again.chunks_processed == 0 and again.chunks_new == 0
    assert _counts(url)[2] == N_CHUNKS
    store.reset()
    store.close()
