"""Names shown with their rows' key, read from the real warehouse by ``router.parse.repeated``."""

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
  - name: players
    sql_table: {SCHEMA}.players
    dimensions:
      - {{name: player_id, sql: player_id, type: number, primary_key: true, public: true}}
      - {{name: name, sql: name, type: string, title: Player name}}
  - name: missing
    sql_table: {SCHEMA}.no_such_table
    dimensions:
      - {{name: row_id, sql: row_id, type: number, primary_key: true, public: true}}
      - {{name: name, sql: name, type: string, title: Name}}
  - name: awards
    sql_table: {SCHEMA}.awards
    dimensions:
      - {{name: award_id, sql: award_id, type: number, primary_key: true}}
      - {{name: name, sql: name, type: string, title: Award}}
  - name: unanalysed
    sql_table: {SCHEMA}.unanalysed
    dimensions:
      - {{name: row_id, sql: row_id, type: number, primary_key: true}}
      - {{name: name, sql: name, type: string, title: Name}}
"""


def test_shared_labels_and_names_of_many_things_are_keyed_others_are_not(pg_url: str, tmp_path: Path) -> None:
    with connection(pg_url) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
        conn.execute(f"CREATE SCHEMA {SCHEMA}")
        for table in ("playlists", "artists", "players", "awards", "unanalysed"):
            key = "row_id" if table == "unanalysed" else f"{table[:-1]}_id"
            conn.execute(f"CREATE TABLE {SCHEMA}.{table} ({key} int PRIMARY KEY, name text)")
        rows = [(i, "Music" if i in (1, 8) else f"List {i}") for i in range(1, 19)]
        conn.cursor().executemany(f"INSERT INTO {SCHEMA}.playlists VALUES (%s, %s)", rows)
        conn.cursor().executemany(f"INSERT INTO {SCHEMA}.artists VALUES (%s, %s)", [(i, f"A{i}") for i in range(50)])
        conn.cursor().executemany(f"INSERT INTO {SCHEMA}.players VALUES (%s, %s)", [(i, f"P{i}") for i in range(60)])
        conn.cursor().executemany(f"INSERT INTO {SCHEMA}.unanalysed VALUES (%s, 'same')", [(i,) for i in range(5)])
        awards = [(i, f"Award {i % 4}") for i in range(40)]  # four kinds over forty rows: no namesakes
        conn.cursor().executemany(f"INSERT INTO {SCHEMA}.awards VALUES (%s, %s)", awards)
        conn.execute(f"ANALYZE {SCHEMA}.awards")
        conn.execute(f"ANALYZE {SCHEMA}.playlists")
        conn.execute(f"ANALYZE {SCHEMA}.artists")
        (tmp_path / "m.yml").write_text(MODEL, encoding="utf-8")
        found = keyed_labels(conn, load_model(tmp_path), SCHEMA)
        conn.execute(f"DROP SCHEMA {SCHEMA} CASCADE")
    # a shared label; every name of a table of more than 50 things (unique, with a public key); not 50 artists,
    # not the kinds most rows share (an award's name), not a table the warehouse lacks
    assert found == frozenset({"playlists.name", "players.name"})
