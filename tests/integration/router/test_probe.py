"""Literals the value index leaves out, found in the real warehouse by ``router.parse.probe``: codes by the
shape of the column's sampled values, names in title case in columns whose samples are mostly such names."""

from __future__ import annotations

import random
import string
from collections.abc import Iterator
from pathlib import Path

import pytest

from cube_models.model import load_model
from cubesage_core.db import connection
from router.parse.probe import Probe

pytestmark = pytest.mark.integration
SCHEMA = "cs_probe"
TITLES = [
    "Smells Like Teen Spirit",
    "Let There Be Rock",
    "Hotel California",
    "The Trooper",
    "Comfortably Numb",
    "Black Dog",
    "Paint It Black",
    "Born To Run",
    "Lost, Season 1",
]
MODEL = f"""
cubes:
  - name: songs
    sql_table: {SCHEMA}.songs
    dimensions:
      - {{name: song_id, sql: song_id, type: number, primary_key: true}}
      - {{name: title, sql: title, type: string, title: Song}}
      - {{name: code, sql: code, type: string, title: Catalogue code}}
      - {{name: mood, sql: mood, type: string, title: Mood}}
      - {{name: tag, sql: "{{CUBE}}.label || {{CUBE}}.num", type: string, title: Tag}}
      - {{name: ref, sql: ref, type: string, title: Person id}}
"""


def _ref(i: int) -> str:
    """An id made from a name, as a databank makes them: "aardsda01" (letters that vary, then digits)."""
    return "".join(random.Random(i).choices(string.ascii_lowercase, k=5)) + f"{i % 100:02d}"


@pytest.fixture()
def probe(pg_url: str, tmp_path: Path) -> Iterator[Probe]:
    with connection(pg_url) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
        conn.execute(f"CREATE SCHEMA {SCHEMA}")
        conn.execute(
            f"CREATE TABLE {SCHEMA}.songs "
            "(song_id int PRIMARY KEY, title text, code text, mood text, label text, num int, ref text)"
        )
        for i in range(400):
            conn.execute(
                f"INSERT INTO {SCHEMA}.songs VALUES (%s, %s, %s, %s, %s, %s, %s)",
                (
                    i,
                    f"{TITLES[i % len(TITLES)]} Part {i}" if i >= len(TITLES) else TITLES[i],
                    f"CAT-{i:05d}",
                    "calm" if i % 2 else "loud",
                    "AB" if i % 2 else "CD",
                    i,
                    _ref(i),
                ),
            )
        conn.execute(f"ANALYZE {SCHEMA}.songs")
        (tmp_path / "songs.yml").write_text(MODEL, encoding="utf-8")
        found = Probe.load(conn, pg_url, load_model(tmp_path), SCHEMA)
    try:
        yield found
    finally:
        with connection(pg_url) as conn:
            conn.execute(f"DROP SCHEMA {SCHEMA} CASCADE")


def test_a_code_is_found_in_the_column_whose_samples_have_its_shape(probe: Probe) -> None:
    assert [(t.path, t.value) for t in probe.find("CAT-00042")] == [("songs.code", "CAT-00042")]
    assert probe.find("CAT-99999") == []  # the shape fits, the warehouse has no such row


def test_a_title_case_name_is_found_where_names_are_kept(probe: Probe) -> None:
    assert [t.path for t in probe.find("Smells Like Teen Spirit")] == ["songs.title"]
    assert probe.find("Stairway To Heaven") == []
    assert probe.find("calm") == []  # a lower-case word is no literal of any column's shape


def test_a_quoted_name_is_looked_up_whole_as_a_title(probe: Probe) -> None:
    assert [(t.path, t.value) for t in probe.find("《Lost, Season 1》")] == [("songs.title", "Lost, Season 1")]
    assert [t.path for t in probe.find('"Lost, Season 1"')] == ["songs.title"]
    assert probe.find("Lost, Season 1") == []  # unquoted, with a comma: no title phrase


def test_a_code_of_columns_run_together_is_found_by_the_same_expression(probe: Probe) -> None:
    assert [(t.path, t.value) for t in probe.find("AB41")] == [("songs.tag", "AB41")]
    assert probe.find("AB42") == []  # even numbers are CD's


def test_an_id_whose_letters_vary_is_found_by_its_loose_shape(probe: Probe) -> None:
    assert [(t.path, t.value) for t in probe.find(_ref(123))] == [("songs.ref", _ref(123))]
    assert probe.find("zzzzz99") == []  # the shape fits, no such row
    assert [t.path for t in probe.find("CAT-00042")] == ["songs.code"]  # a code with a hyphen: not an id
