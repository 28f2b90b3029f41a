"""Router-facing recall over the warehouse index: which tables, and which entity rows.

``recall_tables`` runs the 8-step retrieval over wiki events and aggregates them by table.
``recall_rows`` resolves names in the question to dimension rows: exact matches of row subjects
(customer, product and region names) come first, spelling-level vector matches (cosine >= 0.9 on
entity-name vectors) after them; a question naming no entity gets no rows. Names are looked up through
PostgreSQL indexes (``sag_index.row_lookup``: btree for exact names, pg_trgm for near spellings), so no
name dictionary is loaded and a table of millions of rows costs a lookup, not memory.

Table searches and row lookups are memoised per question while the ``sag`` schema's refresh key
(:mod:`cubesage_core.refresh_key`, read at most every ``settings.sag_cache_refresh_s``) stays the same:
indexing by any process is seen within that time.
Reads borrow from one checked pool shared with the retriever (``cubesage_core.db.pool``): a connection the
server dropped is replaced, never kept.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from cubesage_core import db
from cubesage_core.llm import wants_llm
from cubesage_core.lru import Lru
from cubesage_core.refresh_key import RefreshKey, fingerprint
from cubesage_core.settings import Settings, get_settings
from sag_index import row_lookup
from sag_index._ner import candidate_keys, dictionary_mentions
from sag_index._text import STOPWORDS, has_cjk, normalize_name, tokenize
from sag_index.backends import get_store
from sag_index.backends.base import VectorStore
from sag_index.errors import NotIndexedError
from sag_index.retrieval import RetrievalParams, RetrievalResult, SagRetriever

ROW_TABLE_FACTOR = 0.5  # a table whose rows the question names, relative to the best wiki table
SEARCHES_KEPT = 2048
SAG_SCHEMA = "sag"
NEAR_WINDOW_WORDS = 4  # question windows of up to this many words are matched against row names by trigrams


@dataclass
class TableHit:
    table: str  # e.g. "lending.loans"
    score: float
    event_ids: list[str] = field(default_factory=list)
    chunk_ids: list[str] = field(default_factory=list)
    title: str = ""


@dataclass
class RowHit:
    table: str  # e.g. "lending.members"
    key_column: str  # e.g. "member_id"
    key_value: Any  # e.g. 4833
    label: str  # e.g. "欧阳澜"
    entity_type: str  # the noun of its table ("customer")
    score: float
    matched_text: str


class SagRecall:
    """Holds a small connection pool, the store and the memoised searches (thread-safe)."""

    def __init__(
        self,
        url: str,
        store: VectorStore | None = None,
        settings: Settings | None = None,
        params: RetrievalParams | None = None,
    ) -> None:
        self.settings = settings or get_settings()
        self.store = store or get_store(self.settings, url)
        self.url = url
        self.params = params or RetrievalParams(top_k=10, kinds=("doc",))
        self._pool = db.pool(url, max_size=2, name="sag-recall")
        self.retriever = self._new_retriever()
        self._lock = threading.Lock()
        kept = SEARCHES_KEPT if self.settings.sag_cache_refresh_s > 0 else 0
        self._searches: Lru[RetrievalResult] = Lru(kept)
        self._row_hits: Lru[list[RowHit]] = Lru(kept)
        self._index_key = RefreshKey(SAG_SCHEMA, self.settings.sag_cache_refresh_s)

    def _new_retriever(self) -> SagRetriever:
        """Fast steps, or, with ``llm_sag_steps``, Step 1 NER and Step 7 selection by the LLM in LLM mode."""
        if self.settings.llm_sag_steps:
            return SagRetriever.with_llm(
                self.url, self.store, self.settings.llm_selection_tokens, params=self.params, connections=self._pool
            )
        return SagRetriever(self.url, self.store, params=self.params, connections=self._pool)

    def close(self) -> None:
        self.retriever.close()
        self._pool.close()

    def refresh(self) -> None:
        """Forget memoised searches and dictionaries (after re-indexing in this process)."""
        with self._lock:
            self._forget()
            self._index_key.expire()

    def _forget(self) -> None:
        self._searches.clear()
        self._row_hits.clear()
        self.retriever.refresh()

    def _check_index(self) -> None:
        """Forget what was loaded when the SAG index changed (caller holds the lock)."""
        if not self._index_key.due():
            return
        if self._index_key.update(db.read(self._pool, lambda conn: fingerprint(conn, self._index_key.schema))):
            self._forget()

    # -- tables ---------------------------------------------------------------------------------
    def search(self, question: str) -> RetrievalResult:
        """The retrieval over wiki events (memoised per question and mode while the index is unchanged)."""
        key = f"{'llm' if self.settings.llm_sag_steps and wants_llm() else 'fast'}:{question}"
        with self._lock:
            self._check_index()
            result = self._searches.get(key)
        if result is None:  # outside the lock: a search waiting on the LLM holds up no other (pooled reads)
            result = self.retriever.retrieve(question, self.params)
            if "fast (" not in " ".join(result.modes.values()):  # an LLM failure is not remembered
                with self._lock:
                    self._searches.put(key, result)
        return result

    def recall_tables(self, question: str, top_k: int = 5, rows: list[RowHit] | None = None) -> list[TableHit]:
        """Tables by the wiki sections about them, plus the tables of rows the question names (``rows``:
        the question's :meth:`recall_rows`, when the caller already has them). Nothing indexed yet (a fresh
        database before ``sag index``) recalls no wiki tables: the tables come from the rows and the model."""
        try:
            events = self.search(question).events
        except NotIndexedError:
            events = []
        hits: dict[str, TableHit] = {}
        for event in events:
            for table in event.meta.get("tables", []):
                hit = hits.get(table)
                if hit is None:
                    hits[table] = TableHit(table, event.score, [event.event_id], [event.chunk_id], event.title)
                else:
                    hit.score += 0.1 * event.score  # more supporting sections, slightly more confidence
                    hit.event_ids.append(event.event_id)
                    hit.chunk_ids.append(event.chunk_id)
        best = max((h.score for h in hits.values()), default=1.0)
        for row in self.recall_rows(question) if rows is None else rows:
            score = ROW_TABLE_FACTOR * best * row.score
            hit = hits.get(row.table)
            if hit is None:
                hits[row.table] = TableHit(row.table, score, [], [], f"{row.entity_type} {row.label}")
            else:
                hit.score = max(hit.score, score)
        ranked = sorted(hits.values(), key=lambda h: h.score, reverse=True)[:top_k]
        for hit in ranked:
            hit.score = round(hit.score, 4)
        return ranked

    # -- rows -----------------------------------------------------------------------------------------
    def recall_rows(self, question: str, top_k: int = 10) -> list[RowHit]:
        """Rows named in the question: exact names (score 1.0) first, then near spellings (0.9 x cosine)."""
        with self._lock:
            self._check_index()
            memo = self._row_hits.get((question, top_k))
        if memo is not None:
            return list(memo)
        hits = self._recall_rows(question, top_k)
        with self._lock:
            self._row_hits.put((question, top_k), hits)
        return list(hits)

    def _recall_rows(self, question: str, top_k: int) -> list[RowHit]:
        names, rows = db.read(self._pool, lambda conn: row_lookup.named_rows(conn, candidate_keys(question)))
        hits: dict[tuple[str, Any], RowHit] = {}
        exact = dictionary_mentions(question, names)
        for mention in sorted(exact, key=lambda m: -len(m.text)):
            found = rows.get(mention.entity_id or "", [])
            if not _cjk_boundary_ok(question, mention.text):
                continue  # a name inside an ordinary word
            for row in found:
                key = (row["table"], row["key_value"])
                if key not in hits:
                    hits[key] = RowHit(**row, score=1.0, matched_text=mention.text)
        covered = {token for m in exact for token in m.text.split()}
        for row, cosine, window in self._near_spellings(question, {m.entity_id for m in exact}):
            key = (row["table"], row["key_value"])
            if set(window.split()) <= covered:
                continue  # the words are an exact name already: a near spelling of them is another row
            if key not in hits:
                hits[key] = RowHit(**row, score=round(0.9 * cosine, 4), matched_text=window)
        return sorted(hits.values(), key=lambda h: -h.score)[:top_k]

    def _near_spellings(self, question: str, skip: set[str | None]) -> list[tuple[dict[str, Any], float, str]]:
        """BM25 over entity names and trigram similarity (pg_trgm) propose row subjects; a question window of
        similar length must reach cosine >= entity_threshold with the name (character n-gram vectors:
        spelling, not meaning)."""
        tokens = tokenize(question)
        if not tokens:
            return []
        words = normalize_name(question).split()
        windows = sorted(
            {" ".join(words[i : i + n]) for n in range(1, NEAR_WINDOW_WORDS + 1) for i in range(len(words) - n + 1)}
            - STOPWORDS
        )
        proposed = [h.id for h in self.store.text_entities(tokens, 50)]

        def lookup(conn: Any) -> tuple[dict[str, str], dict[str, list[dict[str, Any]]]]:
            near = row_lookup.near_names(conn, [w for w in windows if len(w) >= 3 and not has_cjk(w)])
            return row_lookup.rows_of(conn, list(dict.fromkeys(proposed + near)))

        names, rows = db.read(self._pool, lookup)
        by_id = {entity_id: name for name, entity_id in names.items()}
        candidates = [e for e in dict.fromkeys(proposed + list(rows)) if e in rows and e not in skip]
        if not candidates:
            return []
        from sag_index.pipeline import default_name_embedder

        embedder = default_name_embedder()
        out: list[tuple[dict[str, Any], float, str]] = []
        for entity_id in candidates:
            name = by_id[entity_id]
            n = len(name.split())
            spans = sorted(
                {" ".join(words[i : i + w]) for w in (n - 1, n, n + 1) if w > 0 for i in range(len(words) - w + 1)}
            )
            if not spans or has_cjk(name):
                continue
            vectors = embedder.embed([name, *spans])
            scores = vectors[1:] @ vectors[0]
            best = int(scores.argmax())
            if scores[best] >= self.params.entity_threshold:
                out.extend((row, float(scores[best]), spans[best]) for row in rows[entity_id])
        return out

    def warm_up(self) -> None:
        """Load the tokenizers and the wiki dictionary now, not inside the first question's latency budget."""
        self.retriever.dictionary()
        from sag_index._text import warm_up

        warm_up()


def _cjk_boundary_ok(question: str, match: str) -> bool:
    """Reject a Chinese match lying inside a longer dictionary word (a short name inside an ordinary word),
    unless the word begins with it: a name and its suffix (北区 in 北区分馆, 上海 in 上海市)."""
    if not has_cjk(match):
        return True
    from sag_index._text import _jieba

    jieba = _jieba()
    words = list(jieba.cut(question, HMM=False))
    if match in words:
        return True
    return not any(match in w and not w.startswith(match) and jieba.dt.FREQ.get(w, 0) > 0 for w in words)
