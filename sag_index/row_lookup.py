"""Rows named in a question, looked up through PostgreSQL indexes (no name dictionary in memory).

Exact names: every key the dictionary NER would try (token n-grams, CJK substrings; ``_ner.candidate_keys``)
is looked up at once through the unique btree on ``sag.entity.normalized``, restricted to the subjects of
row chunks. Near spellings: question windows are matched against entity names by trigram similarity
(``pg_trgm``, GIN index ``entity_normalized_trgm``); the caller confirms them with name vectors. Either
way one round trip, however many rows the index holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

NEAR_CANDIDATES = 50
NEAR_SIMILARITY = 0.5  # pg_trgm similarity of a question window and a row name that proposes the row

_ROWS = """SELECT en.entity_id, en.normalized, c.meta->>'table', c.meta->>'key_column', c.meta->'key_value',
       c.meta->>'label', c.meta->>'entity_type'
FROM sag.entity en JOIN sag.event_entity ee ON ee.entity_id = en.entity_id AND ee.role = 'subject'
JOIN sag.event e USING (event_id) JOIN sag.source_chunk c USING (chunk_id)
WHERE c.kind = 'row' AND {where}"""

RowTemplate = dict[str, Any]


def _group(rows: Sequence[tuple[Any, ...]]) -> tuple[dict[str, str], dict[str, list[RowTemplate]]]:
    names: dict[str, str] = {}
    by_entity: dict[str, list[RowTemplate]] = {}
    for entity_id, normalized, table, key_column, key_value, label, entity_type in rows:
        names[normalized] = entity_id
        by_entity.setdefault(entity_id, []).append(
            {
                "table": table,
                "key_column": key_column,
                "key_value": key_value,
                "label": label,
                "entity_type": entity_type,
            }
        )
    return names, by_entity


def named_rows(conn: psycopg.Connection, keys: Sequence[str]) -> tuple[dict[str, str], dict[str, list[RowTemplate]]]:
    """(normalized name -> entity id, entity id -> its rows) for the row subjects among ``keys``."""
    if not keys:
        return {}, {}
    return _group(conn.execute(_ROWS.format(where="en.normalized = ANY(%s)"), (list(keys),)).fetchall())


def rows_of(conn: psycopg.Connection, entity_ids: Sequence[str]) -> tuple[dict[str, str], dict[str, list[RowTemplate]]]:
    """The same for entity ids (candidates another channel proposed)."""
    if not entity_ids:
        return {}, {}
    return _group(conn.execute(_ROWS.format(where="en.entity_id = ANY(%s)"), (list(entity_ids),)).fetchall())


def near_names(conn: psycopg.Connection, windows: Sequence[str], limit: int = NEAR_CANDIDATES) -> list[str]:
    """Entity ids of row subjects spelled like one of ``windows`` (trigram similarity >= ``NEAR_SIMILARITY``
    through the GIN index, best first)."""
    if not windows:
        return []
    rows = conn.execute(
        """WITH near AS (SELECT en.entity_id, similarity(en.normalized, w.span) AS s
                         FROM unnest(%(w)s::text[]) AS w(span) JOIN sag.entity en ON en.normalized %% w.span),
                best AS (SELECT entity_id, max(s) AS s FROM near WHERE s >= %(t)s
                         GROUP BY entity_id ORDER BY s DESC LIMIT %(pool)s)
           SELECT b.entity_id FROM best b
           WHERE EXISTS (SELECT 1 FROM sag.event_entity ee JOIN sag.event e USING (event_id)
                         JOIN sag.source_chunk c USING (chunk_id)
                         WHERE ee.entity_id = b.entity_id AND ee.role = 'subject' AND c.kind = 'row')
           ORDER BY b.s DESC, b.entity_id LIMIT %(k)s""",
        {"w": list(windows), "t": NEAR_SIMILARITY, "pool": 4 * limit, "k": limit},
    ).fetchall()
    return [r[0] for r in rows]
