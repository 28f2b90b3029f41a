"""Titles and descriptions of the warehouse tables, from the ``table:`` semantic assets (for catalog answers)."""

from __future__ import annotations

import psycopg


def table_catalog(conn: psycopg.Connection) -> dict[str, tuple[str, str]]:
    """Physical table name (``credit_notes``) -> (title, description) of its semantic asset."""
    rows = conn.execute(
        "SELECT meta->>'sql_table', title, description FROM semlayer.asset "
        "WHERE asset_type = 'table' AND meta ? 'sql_table' ORDER BY asset_id"
    ).fetchall()
    out: dict[str, tuple[str, str]] = {}
    for sql_table, title, description in rows:
        out.setdefault(str(sql_table).rsplit(".", 1)[-1].lower(), (title or "", description or ""))
    return out
