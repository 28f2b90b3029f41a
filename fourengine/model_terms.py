"""Business terms read from the semantic model itself, so a warehouse answers without a glossary.

Every published cube, measure, dimension and segment (``semlayer.asset`` rows exported from the Cube
models) becomes a term ``model:<asset id>`` whose words are its title, its name in words
(``avg_invoice_total`` -> "avg invoice total") and the synonyms its model lists in ``meta.synonyms``.
Engine R matches them like glossary terms; where the glossary also matches the same words, the glossary
wins (``fourengine.engines.relational``). Key and id columns, time dimensions and words that name no
business concept ("count", "total", "id") make no term.

``meta`` keys read here (Cube ``meta`` of a cube, measure, dimension or segment):
- ``synonyms``: list of other names (any language) for the member.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import psycopg

from fourengine.store import TermRow, upsert_terms
from fourengine.terms import normalise

PREFIX = "model:"
_LANGUAGE_ONLY = frozenset(
    (
        "count",
        "counts",
        "total",
        "totals",
        "sum",
        "average",
        "avg",
        "mean",
        "min",
        "max",
        "minimum",
        "maximum",
        "number",
        "value",
        "values",
        "id",
        "key",
        "name",
        "code",
        "type",
        "date",
        "time",
        "amount",
        "rate",
        "flag",
        "status",
        "comment",
        "description",
        "note",
        "row",
        "record",
    )
)
_KEY = re.compile(r"(?:^|_)(?:id|sk)$|key$")
_SQL = """SELECT asset_id, asset_type, name, title, meta FROM semlayer.asset
          WHERE asset_type IN ('table', 'metric', 'dimension', 'segment')
            AND meta->>'source' = 'cube_models'"""


def _words_of(name: str) -> str:
    """``orders.avg_invoice_total`` -> "avg invoice total"; camelCase is split too."""
    leaf = name.rsplit(".", 1)[-1]
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", leaf).replace("_", " ").strip()


def _titles(title: str | None) -> list[str]:
    """A title, and the title without a parenthesised unit or note ("Longest track (ms)" -> "Longest track")."""
    if not title:
        return []
    bare = re.sub(r"\s*\([^)]*\)", "", title).strip()
    return [title, bare] if bare and bare != title else [title]


def _synonyms(meta: dict[str, Any]) -> list[str]:
    user = meta.get("user_meta") or {}
    found = user.get("synonyms") if isinstance(user, dict) else None
    return [str(s) for s in found or [] if isinstance(s, str | int) and str(s).strip()]


def _excluded(asset_type: str, name: str, meta: dict[str, Any]) -> bool:
    if asset_type != "dimension":
        return False
    leaf = name.rsplit(".", 1)[-1].lower()
    return bool(meta.get("primary_key")) or meta.get("type") == "time" or bool(_KEY.search(leaf))


def _lexemes(words: Iterable[str]) -> list[str]:
    """The distinct words that name something: not empty, not only language words."""
    out: list[str] = []
    for word in words:
        key = normalise(word)
        if key and not set(key.split()) <= _LANGUAGE_ONLY and key not in out and len(key) > 1:
            out.append(word.strip())
    return out


def model_terms(rows: Iterable[tuple[str, str, str, str | None, dict[str, Any]]]) -> list[TermRow]:
    """Terms of asset rows ``(asset_id, asset_type, name, title, meta)``.

    A member named like its own cube ("Customers", the count of the customers cube) leaves that word to one
    of them, never both (both would make it ambiguous): to the cube when the member is a count (so "list
    the customers" stays about rows), else to the member ("revenue" of a revenue cube is the measure)."""
    named = [
        (row, _lexemes([*_titles(row[3]), _words_of(row[2]), *_synonyms(row[4])]))
        for row in rows
        if not _excluded(row[1], row[2], row[4]) and row[4].get("public") is not False
    ]
    cube_words = {row[2]: {normalise(w) for w in words} for row, words in named if row[1] == "table"}
    taken = {
        row[4].get("cube"): {normalise(w) for w in words}
        for row, words in named
        if row[1] == "metric" and row[4].get("agg") not in ("count", None)
    }
    terms: list[TermRow] = []
    for (asset_id, asset_type, name, _title, meta), words in named:
        if asset_type == "table":
            words = [w for w in words if normalise(w) not in taken.get(name, set())]
        elif meta.get("agg") == "count" or asset_type != "metric":
            words = [w for w in words if normalise(w) not in cube_words.get(meta.get("cube") or "", set())]
        if words:
            terms.append(TermRow(f"{PREFIX}{asset_id}", words[0], words[1:], "en", "", asset_type, asset_id))
    return terms


def sync_model_terms(conn: psycopg.Connection) -> int:
    """Replace the ``model:`` terms with those of the currently published assets; returns their count."""
    terms = model_terms(conn.execute(_SQL).fetchall())
    with conn.transaction():
        conn.execute(
            "DELETE FROM semlayer.business_term WHERE term_id LIKE %s AND NOT (term_id = ANY(%s))",
            (PREFIX + "%", [t.term_id for t in terms]),
        )
        upsert_terms(conn, terms)
    return len(terms)
