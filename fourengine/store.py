"""Writers of the semlayer rows fourengine owns or loads: assets + embeddings, business terms, join edges.

Every writer upserts (idempotent) and re-embeds only rows whose text changed
(``asset_embedding.text_hash``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg

from cubesage_core.embeddings import Embedder
from fourengine.models import Asset
from fourengine.terms import normalise


@dataclass
class TermRow:
    term_id: str
    canonical_term: str
    synonyms: list[str] = field(default_factory=list)
    language: str = "en"
    definition: str = ""
    mapped_asset_type: str | None = None
    mapped_asset_id: str | None = None
    filter_value: str | None = None

    @property
    def lexemes(self) -> list[str]:
        return [k for k in dict.fromkeys(normalise(t) for t in [self.canonical_term, *self.synonyms]) if k]


def text_hash(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def upsert_assets(conn: psycopg.Connection, assets: Sequence[Asset], texts: Sequence[str], embedder: Embedder) -> int:
    """Upsert assets and embed ``texts`` (one per asset) where the text changed; returns the embedded count."""
    if not assets:
        return 0
    with conn.cursor() as cur:
        cur.executemany(
            """INSERT INTO semlayer.asset (asset_id, asset_type, name, title, description, parent_id, certified, meta,
                                           content_hash, updated_at)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, now())
               ON CONFLICT (asset_id) DO UPDATE SET asset_type = EXCLUDED.asset_type, name = EXCLUDED.name,
                 title = EXCLUDED.title, description = EXCLUDED.description, parent_id = EXCLUDED.parent_id,
                 certified = EXCLUDED.certified, meta = EXCLUDED.meta, content_hash = EXCLUDED.content_hash,
                 updated_at = now()
               WHERE semlayer.asset.content_hash IS DISTINCT FROM EXCLUDED.content_hash""",
            [
                (
                    a.asset_id,
                    a.asset_type,
                    a.name,
                    a.title,
                    a.description,
                    a.parent_id,
                    a.certified,
                    json.dumps(a.meta, ensure_ascii=False),
                    text_hash(json.dumps([a.__dict__, t], default=str)),
                )
                for a, t in zip(assets, texts, strict=True)
            ],
        )
        cur.execute(
            "SELECT asset_id, text_hash FROM semlayer.asset_embedding WHERE asset_id = ANY(%s)",
            ([a.asset_id for a in assets],),
        )
        known: dict[str, str] = dict(cur.fetchall())
        todo = [(a.asset_id, t) for a, t in zip(assets, texts, strict=True) if known.get(a.asset_id) != text_hash(t)]
        for start in range(0, len(todo), 256):
            chunk = todo[start : start + 256]
            vectors = embedder.embed([t for _, t in chunk])
            cur.executemany(
                """INSERT INTO semlayer.asset_embedding (asset_id, embedding, text_hash) VALUES (%s, %s, %s)
                   ON CONFLICT (asset_id)
                   DO UPDATE SET embedding = EXCLUDED.embedding, text_hash = EXCLUDED.text_hash""",
                [(aid, vec, text_hash(t)) for (aid, t), vec in zip(chunk, vectors, strict=True)],
            )
    return len(todo)


def delete_assets_except(conn: psycopg.Connection, asset_type: str, keep: Sequence[str], prefix: str = "") -> int:
    """Remove assets of ``asset_type`` (ids starting with ``prefix``) not in ``keep``; returns the count."""
    cur = conn.execute(
        "DELETE FROM semlayer.asset WHERE asset_type = %s AND asset_id LIKE %s AND NOT (asset_id = ANY(%s))",
        (asset_type, prefix + "%", list(keep)),
    )
    return cur.rowcount


def upsert_terms(conn: psycopg.Connection, terms: Sequence[TermRow]) -> None:
    with conn.cursor() as cur:
        cur.executemany(
            """INSERT INTO semlayer.business_term (term_id, canonical_term, synonyms, language, definition,
                   mapped_asset_type, mapped_asset_id, filter_value, lexemes, updated_at)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, now())
               ON CONFLICT (term_id) DO UPDATE SET canonical_term = EXCLUDED.canonical_term,
                 synonyms = EXCLUDED.synonyms, language = EXCLUDED.language, definition = EXCLUDED.definition,
                 mapped_asset_type = EXCLUDED.mapped_asset_type, mapped_asset_id = EXCLUDED.mapped_asset_id,
                 filter_value = EXCLUDED.filter_value, lexemes = EXCLUDED.lexemes, updated_at = now()""",
            [
                (
                    t.term_id,
                    t.canonical_term,
                    list(t.synonyms),
                    t.language,
                    t.definition,
                    t.mapped_asset_type,
                    t.mapped_asset_id,
                    t.filter_value,
                    t.lexemes,
                )
                for t in terms
            ],
        )


def upsert_join_edges(conn: psycopg.Connection, edges: Sequence[dict[str, Any]]) -> None:
    """Edges as dicts with edge_id, left_table, right_table, on_sql, relationship, fanout_risk."""
    with conn.cursor() as cur:
        cur.executemany(
            """INSERT INTO semlayer.join_edge (edge_id, left_table, right_table, on_sql, relationship, fanout_risk)
               VALUES (%(edge_id)s, %(left_table)s, %(right_table)s, %(on_sql)s, %(relationship)s, %(fanout_risk)s)
               ON CONFLICT (edge_id) DO UPDATE SET left_table = EXCLUDED.left_table,
                 right_table = EXCLUDED.right_table, on_sql = EXCLUDED.on_sql,
                 relationship = EXCLUDED.relationship, fanout_risk = EXCLUDED.fanout_risk""",
            list(edges),
        )


def read_terms(conn: psycopg.Connection) -> list[TermRow]:
    """The glossary's terms (not the ``model:`` terms derived from the Cube model), oldest id first."""
    cur = conn.execute(
        "SELECT term_id, canonical_term, synonyms, language, definition, mapped_asset_type, mapped_asset_id, "
        "filter_value FROM semlayer.business_term WHERE term_id NOT LIKE 'model:%%' ORDER BY term_id"
    )
    return [
        TermRow(t, c, list(s or []), lang or "en", d or "", kind, asset, value)
        for t, c, s, lang, d, kind, asset, value in cur.fetchall()
    ]
