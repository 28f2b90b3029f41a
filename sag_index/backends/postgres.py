"""PostgreSQL backend: pgvector cosine search and BM25 over token postings, in schema ``sag``.

kNN runs on HNSW indexes (``cubesage_core/schema/035_sag_vector_indexes.sql``) with ``hnsw.ef_search``
raised to k; events are searched kind by kind, wiki events through their index (table-row events have no
vectors). Entity names have no graph: a mention's candidates are the entities sharing one of its tokens
(BM25 postings), ranked by exact cosine. A bulk load drops the indexes and builds them once at its end
(``_hnsw``). BM25 uses Lucene's formula (k1=1.2,
b=0.75) over ``sag.bm25_term``/``sag.bm25_doc``, filled from the shared tokenizer and partitioned by index
(``event:doc``, ``event:row``, ``entity``). Connections come from a checked pool
(:func:`cubesage_core.db.pool`); reads are retried once when the server dropped their connection.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
from psycopg import sql
from psycopg_pool import PoolTimeout

from cubesage_core import db
from sag_index.backends import _hnsw
from sag_index.backends.base import IndexBatch, VectorField, VectorStore
from sag_index.errors import StoreUnavailable
from sag_index.models import Hit
from sag_index.repository import STORE_WRITE_LOCK, lock_writes

K1, B = 1.2, 0.75
BLOCK_CAP = 5000
EVENT_KINDS = ("doc", "row")
ANALYZE_AFTER = 5000  # documents written before flush() refreshes statistics
HNSW_EF = 40  # pgvector's default hnsw.ef_search; raised to k for bigger k
HNSW_EF_MAX = 1000  # pgvector's upper bound of hnsw.ef_search
_VEC_COLUMN = {"title": "title_vec", "content": "content_vec"}
COPY_LINES = 8192  # COPY text lines per write
_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _copy_upsert(
    cur: Any,
    table: str,
    columns: tuple[str, ...],
    types: tuple[str, ...],
    rows: list[tuple[Any, ...]],
    on_conflict: str,
) -> None:
    """Upsert ``rows`` (keyed by their first column; a key given twice: the last) into ``sag.<table>``: rows
    with a new key are copied straight into the table (binary COPY), the others through a temporary table and
    ``INSERT ... ON CONFLICT (key) DO UPDATE SET <on_conflict>`` (re-indexed documents are the exception)."""
    if not rows:
        return
    by_key = {row[0]: row for row in rows}
    key = sql.Identifier(columns[0])
    cur.execute(
        sql.SQL("SELECT {k} FROM {t} WHERE {k} = ANY(%s)").format(k=key, t=sql.Identifier("sag", table)),
        (list(by_key),),
    )
    known = {r[0] for r in cur.fetchall()}
    cols = sql.SQL(", ").join(map(sql.Identifier, columns))

    def copy_into(target: sql.Composable, chosen: list[tuple[Any, ...]]) -> None:
        with cur.copy(sql.SQL("COPY {t} ({c}) FROM STDIN WITH (FORMAT BINARY)").format(t=target, c=cols)) as copy:
            copy.set_types(list(types))
            for row in chosen:
                copy.write_row(row)

    copy_into(sql.Identifier("sag", table), [row for k, row in by_key.items() if k not in known])
    if known:
        temp = sql.Identifier(f"_up_{table}")
        cur.execute(
            sql.SQL("CREATE TEMP TABLE IF NOT EXISTS {tmp} (LIKE {t}) ON COMMIT DROP").format(
                tmp=temp, t=sql.Identifier("sag", table)
            )
        )
        copy_into(temp, [by_key[k] for k in known])
        cur.execute(
            sql.SQL("INSERT INTO {t} ({c}) SELECT {c} FROM {tmp} ON CONFLICT ({k}) DO UPDATE SET ").format(
                t=sql.Identifier("sag", table), c=cols, tmp=temp, k=key
            )
            + sql.SQL(on_conflict)
        )


def _bm25_docs(batch: IndexBatch) -> dict[tuple[str, str], tuple[str, list[str]]]:
    """(idx, doc id) -> (kind, tokens) of the batch's events and entities (a doc given twice: the last)."""
    docs: dict[tuple[str, str], tuple[str, list[str]]] = {}
    for ev in batch.events:
        docs[(f"event:{ev.kind}", ev.event_id)] = (ev.kind, ev.tokens)
    for en in batch.entities:
        docs[("entity", en.entity_id)] = ("entity", en.tokens)
    return docs


def _write_bm25(cur: Any, docs: dict[tuple[str, str], tuple[str, list[str]]]) -> None:
    """Replace the BM25 rows of ``docs``: the known ones' doc and posting rows are deleted, then every row is
    copied straight into its table (no conflict is left to resolve: one bulk COPY instead of an upsert through
    a temporary table), postings in primary-key order so the btree is filled page by page."""
    if not docs:
        return
    ids_by_idx: dict[str, list[str]] = {}
    for idx, doc_id in docs:
        ids_by_idx.setdefault(idx, []).append(doc_id)
    for idx, ids in ids_by_idx.items():  # re-indexed docs (new ones have no rows)
        cur.execute("SELECT doc_id FROM sag.bm25_doc WHERE idx = %s AND doc_id = ANY(%s)", (idx, ids))
        if known := [r[0] for r in cur.fetchall()]:
            cur.execute("DELETE FROM sag.bm25_term WHERE idx = %s AND doc_id = ANY(%s)", (idx, known))
            cur.execute("DELETE FROM sag.bm25_doc WHERE idx = %s AND doc_id = ANY(%s)", (idx, known))
    with cur.copy("COPY sag.bm25_doc (idx, doc_id, kind, length) FROM STDIN") as copy:
        for (idx, doc_id), (kind, tokens) in docs.items():
            copy.write_row((idx, doc_id, kind, len(tokens)))
    lines = sorted(_posting_lines(docs))  # about primary-key order (tab-separated), so the btree fills page by page
    with cur.copy("COPY sag.bm25_term (idx, term, doc_id, tf) FROM STDIN") as copy:
        for start in range(0, len(lines), COPY_LINES):
            copy.write("".join(lines[start : start + COPY_LINES]))


def _posting_lines(docs: dict[tuple[str, str], tuple[str, list[str]]]) -> Iterator[str]:
    """Each posting ``(idx, term, doc_id, tf)`` as a line of COPY's text format: formatted here, written in blocks
    (row by row, psycopg's ``write_row`` cost more client CPU than the server's insert of the row)."""
    for (idx, doc_id), (_, tokens) in docs.items():
        head, tail = f"{_copy_text(idx)}\t", f"\t{_copy_text(doc_id)}\t"
        for term, tf in Counter(tokens).items():
            yield f"{head}{_copy_text(term)}{tail}{tf}\n"


def _copy_text(value: str) -> str:
    """``value`` as a field of COPY's text format (backslash, tab and line breaks escaped)."""
    return value.translate(_COPY_ESCAPES)


class PostgresStore(VectorStore):
    backend = "postgres"

    def __init__(self, url: str, max_connections: int = 4) -> None:
        self._pool = db.pool(url, min_size=1, max_size=max_connections, name="sag-store")
        try:
            self._pool.wait(timeout=db.POOL_TIMEOUT_S)
        except PoolTimeout as err:
            self._pool.close()
            raise StoreUnavailable(f"PostgreSQL store unreachable: {err}") from err
        self._url = url
        self._stats: dict[str, tuple[int, float, float]] = {}
        self._written = 0
        self._bulk = False  # HNSW indexes dropped for a bulk load (sag_index.backends._hnsw)

    def _rows(self, query: str, params: Sequence[Any] | dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
        """All rows of a read (retried once on a fresh connection when the server dropped the first)."""
        return db.read(self._pool, lambda conn: conn.execute(query, params).fetchall())

    def _knn_rows(self, query: str | sql.Composable, params: dict[str, Any], k: int) -> list[tuple[Any, ...]]:
        """Rows of an HNSW kNN query: ``hnsw.ef_search`` at least ``k`` (an index scan returns at most that many)."""

        def work(conn: Any) -> list[tuple[Any, ...]]:
            with conn.transaction():
                ef = min(max(HNSW_EF, int(k)), HNSW_EF_MAX)
                conn.execute(sql.SQL("SET LOCAL hnsw.ef_search = {}").format(sql.Literal(ef)))
                return conn.execute(query, params).fetchall()

        return db.read(self._pool, work)

    def _write_with(self, work: Callable[[Any], None]) -> None:
        with self._pool.connection() as conn:
            work(conn)

    def _write(self, query: str, params: Sequence[Any] | None = None) -> None:
        with self._pool.connection() as conn:
            conn.execute(query, params)

    def ensure(self) -> None:
        exists = self._rows("SELECT to_regclass('sag.bm25_term')")[0][0]
        if exists is None:
            db.apply_schema(self._url)

    def reset(self) -> None:
        self._write(
            "TRUNCATE sag.event_vectors, sag.entity_vectors, sag.event_entity_vectors, sag.bm25_doc, sag.bm25_term"
        )
        self._stats.clear()

    def upsert(self, batch: IndexBatch) -> None:
        if not self._bulk and len(batch.events) + len(batch.entities) >= _hnsw.BULK_DOCS:
            self._bulk = True  # a bulk load: HNSW indexes are built once, by flush()
            self._write_with(_hnsw.drop)
        with self._pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
            lock_writes(cur, STORE_WRITE_LOCK)  # keys _copy_upsert and _write_bm25 find absent stay absent
            _upsert_vectors(cur, batch)
            _write_bm25(cur, _bm25_docs(batch))
        self._stats.clear()
        self._written += len(batch.events) + len(batch.entities)

    def flush(self) -> None:
        """Build the HNSW indexes a bulk load dropped; refresh planner statistics after bulk loads (fresh
        tables without them get ruinous plans)."""
        if self._bulk:
            self._write_with(_hnsw.build)
            self._bulk = False
        if self._written >= ANALYZE_AFTER:
            self._write("ANALYZE sag.event_vectors, sag.entity_vectors, sag.bm25_doc, sag.bm25_term")
            self._written = 0

    def delete_events(self, event_ids: Sequence[str]) -> None:
        ids = list(event_ids)
        if not ids:
            return
        with self._pool.connection() as conn, conn.transaction():
            conn.execute("DELETE FROM sag.event_vectors WHERE event_id = ANY(%s)", (ids,))
            conn.execute("DELETE FROM sag.event_entity_vectors WHERE event_id = ANY(%s)", (ids,))
            conn.execute("DELETE FROM sag.bm25_term WHERE idx LIKE 'event:%%' AND doc_id = ANY(%s)", (ids,))
            conn.execute("DELETE FROM sag.bm25_doc WHERE idx LIKE 'event:%%' AND doc_id = ANY(%s)", (ids,))
        self._stats.clear()

    # -- search ---------------------------------------------------------------------------------
    def knn_events(
        self, vector: np.ndarray, k: int, field: VectorField = "content", kinds: Sequence[str] | None = None
    ) -> list[Hit]:
        col = _VEC_COLUMN[field]
        parts = [
            sql.SQL(
                "(SELECT event_id, {col} <=> %(v)s AS d FROM sag.event_vectors WHERE kind = {kind} "
                "AND {col} IS NOT NULL ORDER BY {col} <=> %(v)s LIMIT %(k)s)"
            ).format(col=sql.Identifier(col), kind=sql.Literal(kind))
            for kind in EVENT_KINDS
            if not kinds or kind in kinds
        ]  # a literal kind picks its partial index
        if not parts:
            return []
        query = (
            sql.SQL("SELECT event_id, d FROM (")
            + sql.SQL(" UNION ALL ").join(parts)
            + sql.SQL(") hits ORDER BY d, event_id LIMIT %(k)s")
        )
        rows = self._knn_rows(query, {"v": vector, "k": k}, k)
        return [Hit(r[0], 1 - float(r[1])) for r in rows]

    def score_events(self, vector: np.ndarray, ids: Sequence[str], field: VectorField = "content") -> dict[str, float]:
        if not ids:
            return {}
        col = _VEC_COLUMN[field]
        rows = self._rows(
            f"SELECT event_id, 1 - ({col} <=> %s) FROM sag.event_vectors WHERE event_id = ANY(%s) "
            f"AND {col} IS NOT NULL",
            (vector, list(ids)),
        )
        return {r[0]: float(r[1]) for r in rows}

    def knn_entities(
        self, vector: np.ndarray, k: int, threshold: float = 0.0, tokens: Sequence[str] | None = None
    ) -> list[Hit]:
        if tokens:  # token blocking stands in for an ANN index: exact cosine over entities sharing a token
            rows = self._rows(
                """WITH cand AS (SELECT DISTINCT doc_id FROM sag.bm25_term WHERE idx = 'entity'
                                 AND term = ANY(%(t)s) LIMIT %(cap)s)
                   SELECT v.entity_id, 1 - (v.name_vec <=> %(v)s) AS s FROM sag.entity_vectors v
                   JOIN cand ON cand.doc_id = v.entity_id WHERE v.name_vec IS NOT NULL
                   ORDER BY s DESC LIMIT %(k)s""",
                {"t": sorted(set(tokens)), "v": vector, "k": k, "cap": BLOCK_CAP},
            )
            return [Hit(r[0], float(r[1])) for r in rows if r[1] >= threshold]
        rows = self._knn_rows(
            "SELECT entity_id, 1 - (name_vec <=> %(v)s) AS s FROM sag.entity_vectors WHERE name_vec IS NOT NULL "
            "ORDER BY name_vec <=> %(v)s LIMIT %(k)s",
            {"v": vector, "k": k},
            k,
        )
        return [Hit(r[0], float(r[1])) for r in rows if r[1] >= threshold]

    def knn_links(self, vector: np.ndarray, k: int) -> list[tuple[str, str, float]]:
        rows = self._knn_rows(
            "SELECT event_id, entity_id, 1 - (desc_vec <=> %(v)s) FROM sag.event_entity_vectors "
            "ORDER BY desc_vec <=> %(v)s LIMIT %(k)s",
            {"v": vector, "k": k},
            k,
        )
        return [(r[0], r[1], float(r[2])) for r in rows]

    def text_events(
        self, tokens: Sequence[str], k: int, kinds: Sequence[str] | None = None, ids: Sequence[str] | None = None
    ) -> list[Hit]:
        """BM25 per event kind (doc, row: separate postings, so 20,000 rows never slow wiki search)."""
        hits = [h for kind in (kinds or EVENT_KINDS) for h in self._bm25(f"event:{kind}", tokens, k, ids)]
        return sorted(hits, key=lambda h: (-h.score, h.id))[:k]

    def text_entities(self, tokens: Sequence[str], k: int) -> list[Hit]:
        return self._bm25("entity", tokens, k, None)

    def _bm25(self, idx: str, tokens: Sequence[str], k: int, ids: Sequence[str] | None) -> list[Hit]:
        terms = sorted(set(tokens))
        if not terms or (ids is not None and not ids):
            return []
        n_docs, avgdl = self._collection_stats(idx)
        if n_docs == 0:
            return []
        filters = " AND t.doc_id = ANY(%(ids)s)" if ids is not None else ""
        rows = self._rows(
            f"""WITH q AS (SELECT unnest(%(terms)s::text[]) AS term),
                   df AS (SELECT q.term, count(*) AS df FROM q JOIN sag.bm25_term t
                          ON t.idx = %(idx)s AND t.term = q.term GROUP BY q.term)
               SELECT t.doc_id, sum(ln(1 + (%(n)s - df.df + 0.5) / (df.df + 0.5))
                        * t.tf * ({K1} + 1) / (t.tf + {K1} * (1 - {B} + {B} * d.length / %(avgdl)s))) AS score
               FROM df JOIN sag.bm25_term t ON t.idx = %(idx)s AND t.term = df.term
               JOIN sag.bm25_doc d ON d.idx = t.idx AND d.doc_id = t.doc_id
               WHERE true {filters}
               GROUP BY t.doc_id ORDER BY score DESC, t.doc_id LIMIT %(k)s""",
            {"terms": terms, "idx": idx, "n": n_docs, "avgdl": avgdl, "k": k, "ids": list(ids or [])},
        )
        return [Hit(r[0], float(r[1])) for r in rows]

    def _collection_stats(self, idx: str) -> tuple[int, float]:
        cached = self._stats.get(idx)
        if cached is None or time.monotonic() - cached[2] > 30:
            n, avgdl = self._rows("SELECT count(*), coalesce(avg(length), 1) FROM sag.bm25_doc WHERE idx = %s", (idx,))[
                0
            ]
            cached = (int(n), float(avgdl) or 1.0, time.monotonic())
            self._stats[idx] = cached
        return cached[0], cached[1]

    def count(self) -> dict[str, int]:
        row = self._rows(
            "SELECT (SELECT count(*) FROM sag.event_vectors), (SELECT count(*) FROM sag.entity_vectors), "
            "(SELECT count(*) FROM sag.event_entity_vectors)"
        )[0]
        return {"events": row[0], "entities": row[1], "links": row[2]}

    def close(self) -> None:
        if self._bulk:  # a bulk load that stopped before flush(): the indexes are built all the same
            self.flush()
        self._pool.close()


def _upsert_vectors(cur: Any, batch: IndexBatch) -> None:
    """Event, entity and link vectors of a batch: new rows copied straight in, known keys updated."""
    _copy_upsert(
        cur,
        "event_vectors",
        ("event_id", "chunk_id", "kind", "title", "title_vec", "content_vec"),
        ("text", "text", "text", "text", "vector", "vector"),
        [(ev.event_id, ev.chunk_id, ev.kind, ev.title, ev.title_vec, ev.content_vec) for ev in batch.events],
        "chunk_id = EXCLUDED.chunk_id, kind = EXCLUDED.kind, title = EXCLUDED.title, "
        "title_vec = EXCLUDED.title_vec, content_vec = EXCLUDED.content_vec",
    )
    _copy_upsert(
        cur,
        "entity_vectors",
        ("entity_id", "name", "normalized", "type", "name_vec"),
        ("text", "text", "text", "text", "vector"),
        [(en.entity_id, en.name, en.normalized, en.type, en.name_vec) for en in batch.entities],
        "name_vec = COALESCE(EXCLUDED.name_vec, sag.entity_vectors.name_vec)",
    )
    if batch.links:
        cur.execute("CREATE TEMP TABLE IF NOT EXISTS _ee (LIKE sag.event_entity_vectors) ON COMMIT DROP")
        with cur.copy("COPY _ee (event_id, entity_id, description, desc_vec) FROM STDIN WITH (FORMAT BINARY)") as copy:
            copy.set_types(["text", "text", "text", "vector"])
            for ln in batch.links:
                copy.write_row((ln.event_id, ln.entity_id, ln.description, ln.desc_vec))
        cur.execute(
            "INSERT INTO sag.event_entity_vectors SELECT DISTINCT ON (event_id, entity_id) * "
            "FROM _ee ON CONFLICT (event_id, entity_id) DO UPDATE SET "
            "description = EXCLUDED.description, desc_vec = EXCLUDED.desc_vec"
        )
