"""The wiki passages behind an answer (provenance): the text of the SAG chunks its table recall relied on.

SAG recall reports, per table it found, the ids of the chunks (wiki sections) that named it; the
passages are those chunks' event titles and texts, the best tables first, a few per table.
"""

from __future__ import annotations

from typing import Any

TABLES = 3
PER_TABLE = 2
TEXT_CHARS = 600


def chunk_ids(sag_tables: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(table, chunk id) of the first chunks of the best tables, each chunk once."""
    seen: set[str] = set()
    picked = []
    for table in sag_tables[:TABLES]:
        fresh = [c for c in table.get("chunk_ids") or [] if c not in seen][:PER_TABLE]
        seen.update(fresh)
        picked += [(str(table.get("table") or ""), c) for c in fresh]
    return picked


def passages(conn: Any, sag_tables: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The passages of ``sag_tables`` (SAG recall's tables) read from ``sag.source_chunk``: table, source,
    title and the first ``TEXT_CHARS`` characters of the text. Row chunks (entity rows) are left out."""
    wanted = chunk_ids(sag_tables)
    if not wanted:
        return []
    rows = conn.execute(
        "SELECT c.chunk_id, c.source, COALESCE(NULLIF(e.title, ''), c.heading), c.text FROM sag.source_chunk c "
        "LEFT JOIN sag.event e USING (chunk_id) WHERE c.chunk_id = ANY(%s) AND c.kind = 'doc'",
        ([c for _, c in wanted],),
    ).fetchall()
    found = {r[0]: r for r in rows}
    out = []
    for table, chunk in wanted:
        if chunk in found:
            _, source, title, text = found[chunk]
            body = text if len(text) <= TEXT_CHARS else text[:TEXT_CHARS].rsplit(" ", 1)[0] + " …"
            out.append({"table": table, "source": source, "title": title or "", "text": body})
    return out
