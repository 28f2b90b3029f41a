"""Labels rows share, read from the real warehouse's statistics by ``router.parse.repeated``."""

from __future__ import annotations

from pathlib import Path

import pytest

from cube_models.model import load_model
from cubesage_core.db import connection
from router.parse.repeated import keyed_labels

pytestmark = pytest.mark.integration
SCHEMA = "cs_repeated"
MODEL = f"""
cubes:
  - name: playlists
    sql_table: {SCHEMA}.playlists
    dimensions:
      - {{name: playlist_id, sql: playlist_id, type: number, primary_key: true}}
      - {{name: name, sql: name, type: string, title: Playlist name}}
  - name: artists
    sql_table: {SCHEMA}.artists
    dimensions:
      - {{name: artist_id, sql: artist_id, type: number, primary_key: true}}
      - {{name: name, sql: name, type: string, title: Artist name}}
  - name: unanalysed
    sql_table: {SCHEMA}.unanalysed
    dimensions:
      - {{name: row_id, sql: row_id, type: number, primary_key: true}}
      - {{name: name, sql: name, type: string, title: Name}}
"""


def test_labels_two_rows_share_are_found_and_unique_or_unknown_ones_are_not(pg_url: str, tmp_path: Path) -> None:
    with connection(pg_url) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
        conn.execute(f"CREATE SCHEMA {SCHEMA}")
        for table in ("playlists", "artists", "unanalysed"):
            key = "row_id" if table == "unanalysed" else f"{table[:-1]}_id"
            conn.execute(f"CREATE TABLE {SCHEMA}.{table} ({key} int PRIMARY KEY, name text)")
        rows = [(i, "Music" if i in (1, 8) else f"List {i}") for i in range(1, 19)]
        conn.cursor().executemany(f"INSERT INTO {SCHEMA}.playlists VALUES (%s, %s)", rows)
        conn.cursor().executemany(f"INSERT INTO {SCHEMA}.artists VALUES (%s, %s)", [(i, f"A{i}") for i in range(50)])
        conn.cursor().executemany(f"INSERT INTO {SCHEMA}.unanalysed VALUES (%s, 'same')", [(i,) for i in range(5)])
        conn.execute(f"ANALYZE {SCHEMA}.playlists")
        conn.execute(f"ANALYZE {SCHEMA}.artists")
        (tmp_path / "m.yml").write_text(MODEL, encoding="utf-8")
        found = keyed_labels(conn, load_model(tmp_path), SCHEMA)
        conn.execute(f"DROP SCHEMA {SCHEMA} CASCADE")
    assert found == frozenset({"playlists.name"})
