"""Relational part of the SAG index in PostgreSQL schema ``sag``: writes (saver) and exact joins.

Used for Step 3 channel 1 (entity -> event), Step 5 multi-hop expansion (entity <-> event)
and Step 8 chunk backtrack, as the seed assigns them to the relational store.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from cubesage_core.db import one
from sag_index.models import Chunk, EventEntityRecord, EventRecord


def register_chunks(conn: psycopg.Connection, chunks: Sequence[Chunk]) -> int:
    """Insert chunks as ``pending`` unless present (by content-hash id). Returns how many were new."""
    if not chunks:
        return 0
    with conn.transaction(), conn.cursor() as cur:
        cur.execute("CREATE TEMP TABLE IF NOT EXISTS _r_sc (LIKE sag.source_chunk INCLUDING DEFAULTS) ON COMMIT DROP")
        with cur.copy(
            "COPY _r_sc (chunk_id, source, source_type, kind, position, heading, text, meta) FROM STDIN"
        ) as copy:
            for c in chunks:
                copy.write_row(
                    (
                        c.chunk_id,
                        c.source,
                        c.source_type,
                        c.kind,
                        c.position,
                        c.heading,
                        c.text.replace("\x00", ""),
                        Jsonb(c.meta),
                    )
                )
        cur.execute(
            "INSERT INTO sag.source_chunk SELECT DISTINCT ON (chunk_id) * FROM _r_sc ON CONFLICT (chunk_id) DO NOTHING"
        )
        return cur.rowcount


def pending_ids(conn: psycopg.Connection, chunk_ids: Sequence[str], store_key: str) -> set[str]:
    """Chunks not yet indexed, or indexed into another vector store than ``store_key``."""
    rows = conn.execute(
        "SELECT chunk_id FROM sag.source_chunk WHERE chunk_id = ANY(%s) "
        "AND (status = 'pending' OR indexed_in IS DISTINCT FROM %s)",
        (list(chunk_ids), store_key),
    ).fetchall()
    return {r[0] for r in rows}


def stale_chunks(conn: psycopg.Connection, sources: Sequence[str], keep_ids: Sequence[str]) -> list[str]:
    """Chunk ids of ``sources`` that are not in ``keep_ids`` (sections edited away or deleted)."""
    rows = conn.execute(
        "SELECT chunk_id FROM sag.source_chunk WHERE source = ANY(%s) AND NOT chunk_id = ANY(%s)",
        (list(sources), list(keep_ids)),
    ).fetchall()
    return [r[0] for r in rows]


def delete_chunks(conn: psycopg.Connection, chunk_ids: Sequence[str]) -> None:
    """Delete chunks; their events and event-entity links go with them (ON DELETE CASCADE)."""
    conn.execute("DELETE FROM sag.source_chunk WHERE chunk_id = ANY(%s)", (list(chunk_ids),))


def known_entities(conn: psycopg.Connection, entity_ids: Iterable[str], store_key: str) -> set[str]:
    """Entities whose vectors the store ``store_key`` already holds."""
    rows = conn.execute(
        "SELECT entity_id FROM sag.entity_in_store WHERE store_key = %s AND entity_id = ANY(%s)",
        (store_key, list(entity_ids)),
    )
    return {r[0] for r in rows.fetchall()}


WRITE_LOCK = 0x5A6_1DE  # transaction-level advisory lock: SAG writers check, then copy, one at a time
# the PostgreSQL vector store's tables hold other keys than the relational ones: their writers lock apart, so a
# batch's vectors and its relational rows are written at once (sag_index.pipeline)
STORE_WRITE_LOCK = WRITE_LOCK + 1


def lock_writes(cur: psycopg.Cursor[Any], lock: int = WRITE_LOCK) -> None:
    """Serialise the writers of one set of tables (``lock``) for this transaction, so the keys a writer found
    absent stay absent until it has copied its rows in (concurrent ingests never meet on a unique key)."""
    cur.execute("SELECT pg_advisory_xact_lock(%s)", (lock,))


def _copy(cur: psycopg.Cursor[Any], table: str, columns: str, rows: Iterable[tuple[Any, ...]]) -> None:
    with cur.copy(f"COPY sag.{table} ({columns}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def _present(cur: psycopg.Cursor[Any], query: str, params: tuple[Any, ...]) -> set[Any]:
    return {r[0] if len(r) == 1 else tuple(r) for r in cur.execute(query, params).fetchall()}


def save_events(
    conn: psycopg.Connection,
    records: Sequence[EventRecord],
    store_key: str,
    vectors_committed: Callable[[], object] | None = None,
) -> None:
    """One transaction: events, entities, links; then ``vectors_committed()`` (it returns once the batch's
    vectors are committed, or raises, which rolls this back), then the chunks are marked ``indexed``. Rows
    already present are kept (an entity named by an earlier document, an event indexed into another store);
    the others are copied straight into their tables."""
    entities = {e.entity_id: e for r in records for e in r.entities}
    events = {r.event_id: r for r in reversed(records)}  # a record given twice: the first, as DO NOTHING kept
    with conn.transaction(), conn.cursor() as cur:
        lock_writes(cur)
        known = _present(cur, "SELECT entity_id FROM sag.entity WHERE entity_id = ANY(%s)", (list(entities),))
        _copy(
            cur,
            "entity",
            "entity_id, name, type, normalized",
            ((e.entity_id, e.name, e.type, e.normalized) for i, e in entities.items() if i not in known),
        )
        old = _present(cur, "SELECT event_id FROM sag.event WHERE event_id = ANY(%s)", (list(events),))
        _copy(
            cur,
            "event",
            "event_id, chunk_id, title, content, mode",
            ((r.event_id, r.chunk.chunk_id, r.title, r.content, r.mode) for i, r in events.items() if i not in old),
        )
        linked = (
            _present(cur, "SELECT event_id, entity_id FROM sag.event_entity WHERE event_id = ANY(%s)", (list(old),))
            if old
            else set()
        )
        links: dict[tuple[str, str], EventEntityRecord] = {}
        for r in records:
            for link in r.links:
                links.setdefault((link.event_id, link.entity_id), link)
        _copy(
            cur,
            "event_entity",
            "event_id, entity_id, role, description",
            ((k[0], k[1], ln.role, ln.description) for k, ln in links.items() if k not in linked),
        )
        stored = _present(
            cur,
            "SELECT entity_id FROM sag.entity_in_store WHERE store_key = %s AND entity_id = ANY(%s)",
            (store_key, list(entities)),
        )
        _copy(cur, "entity_in_store", "store_key, entity_id", ((store_key, i) for i in entities if i not in stored))
        if vectors_committed is not None:
            vectors_committed()
        cur.execute(
            "UPDATE sag.source_chunk SET status = 'indexed', indexed_in = %s WHERE chunk_id = ANY(%s)",
            (store_key, [r.chunk.chunk_id for r in records]),
        )


def analyze(conn: psycopg.Connection) -> None:
    """Refresh planner statistics of the relational tables (after bulk loads)."""
    conn.execute("ANALYZE sag.source_chunk, sag.event, sag.entity, sag.event_entity")


# -- reads used by retrieval --------------------------------------------------------------------
def entity_dictionary(conn: psycopg.Connection) -> dict[str, str]:
    """normalized name -> entity_id, for dictionary NER."""
    return dict(conn.execute("SELECT normalized, entity_id FROM sag.entity").fetchall())


def events_of_entities(conn: psycopg.Connection, entity_ids: Sequence[str], max_df: int) -> list[tuple[str, str, str]]:
    """(event_id, entity_id, role) for entities linked to at most ``max_df`` events (hubs skipped)."""
    if not entity_ids:
        return []
    # one index probe per entity (LATERAL), its links counted only up to max_df + 1: the plan cannot flip to a
    # scan of every link as the table grows, and a hub costs max_df + 1 index entries, not all of its links
    return conn.execute(
        """SELECT ee.event_id, ee.entity_id, ee.role
           FROM unnest(%(ids)s::text[]) AS q(entity_id)
           CROSS JOIN LATERAL (SELECT count(*) AS n FROM (SELECT 1 FROM sag.event_entity x
                               WHERE x.entity_id = q.entity_id LIMIT %(cap)s) capped) df
           CROSS JOIN LATERAL (SELECT e.event_id, e.entity_id, e.role FROM sag.event_entity e
                               WHERE e.entity_id = q.entity_id) ee
           WHERE df.n <= %(max_df)s""",
        {"ids": list(dict.fromkeys(entity_ids)), "cap": max_df + 1, "max_df": max_df},
    ).fetchall()


def entities_of_events(conn: psycopg.Connection, event_ids: Sequence[str]) -> list[tuple[str, str, str]]:
    if not event_ids:
        return []
    return conn.execute(
        "SELECT event_id, entity_id, role FROM sag.event_entity WHERE event_id = ANY(%s)", (list(event_ids),)
    ).fetchall()


def event_kinds(conn: psycopg.Connection, event_ids: Sequence[str]) -> dict[str, str]:
    if not event_ids:
        return {}
    rows = conn.execute(
        "SELECT e.event_id, c.kind FROM sag.event e JOIN sag.source_chunk c USING (chunk_id) "
        "WHERE e.event_id = ANY(%s)",
        (list(event_ids),),
    ).fetchall()
    return dict(rows)


def event_details(conn: psycopg.Connection, event_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    rows = conn.execute(
        """SELECT e.event_id, e.title, e.content, e.chunk_id, c.source, c.kind, c.meta
           FROM sag.event e JOIN sag.source_chunk c USING (chunk_id) WHERE e.event_id = ANY(%s)""",
        (list(event_ids),),
    ).fetchall()
    return {
        r[0]: {"title": r[1], "content": r[2], "chunk_id": r[3], "source": r[4], "kind": r[5], "meta": r[6]}
        for r in rows
    }


def chunks_by_id(conn: psycopg.Connection, chunk_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    rows = conn.execute(
        "SELECT chunk_id, source, heading, text, kind, meta FROM sag.source_chunk WHERE chunk_id = ANY(%s)",
        (list(chunk_ids),),
    ).fetchall()
    return {r[0]: {"source": r[1], "heading": r[2], "text": r[3], "kind": r[4], "meta": r[5]} for r in rows}


def counts(conn: psycopg.Connection) -> dict[str, int]:
    row = conn.execute(
        """SELECT (SELECT count(*) FROM sag.source_chunk), (SELECT count(*) FROM sag.source_chunk
                  WHERE status = 'pending'), (SELECT count(*) FROM sag.event), (SELECT count(*) FROM sag.entity),
                  (SELECT count(*) FROM sag.event_entity)"""
    ).fetchone()
    return dict(zip(("chunks", "pending", "events", "entities", "links"), one(row), strict=True))
