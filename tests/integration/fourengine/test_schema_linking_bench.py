"""The schema-linking bench end to end on a tiny Spider-style set, in its own database of the test server."""

import json
from pathlib import Path

import pytest

from bench.schema_linking import run
from cubesage_core.db import connection

pytestmark = pytest.mark.integration

TABLES = [
    {
        "db_id": "music",
        "table_names_original": ["singer", "concert", "singer_in_concert"],
        "table_names": ["singer", "concert", "singer in concert"],
        "column_names_original": [
            [-1, "*"],
            [0, "Singer_ID"],
            [0, "Name"],
            [0, "Country"],
            [1, "Concert_ID"],
            [1, "Theme"],
            [1, "Year"],
            [2, "Concert_ID"],
            [2, "Singer_ID"],
        ],
        "column_names": [
            [-1, "*"],
            [0, "singer id"],
            [0, "name"],
            [0, "country"],
            [1, "concert id"],
            [1, "theme"],
            [1, "year"],
            [2, "concert id"],
            [2, "singer id"],
        ],
        "column_types": ["text", "number", "text", "text", "number", "text", "number", "number", "number"],
        "foreign_keys": [[7, 4], [8, 1]],
        "primary_keys": [1, 4],
    },
    {
        "db_id": "school",
        "table_names_original": ["student", "course"],
        "table_names": ["student", "course"],
        "column_names_original": [[-1, "*"], [0, "StuID"], [0, "Age"], [1, "CID"], [1, "Title"]],
        "column_names": [[-1, "*"], [0, "student id"], [0, "age"], [1, "course id"], [1, "title"]],
        "column_types": ["text", "number", "number", "number", "text"],
        "foreign_keys": [],
        "primary_keys": [1, 3],
    },
]
QUESTIONS = [
    {
        "question": "What are the names of singers from France?",
        "db_id": "music",
        "query": "SELECT name FROM singer WHERE country = 'France'",
    },
    {
        "question": "Show the theme of each concert and the number of singers in it.",
        "db_id": "music",
        "query": "SELECT T2.theme, count(*) FROM singer_in_concert AS T1 JOIN concert AS T2 "
        "ON T1.concert_id = T2.concert_id GROUP BY T2.theme",
    },
    {"question": "How old is the oldest student?", "db_id": "school", "query": "SELECT max(age) FROM student"},
    {"question": "List all course titles.", "db_id": "school", "query": "SELECT title FROM course"},
]


def test_bench_emits_one_line_per_setting_system_and_split(tmp_path: Path, pg_url: str) -> None:
    folder = tmp_path / "tiny-set"
    folder.mkdir()
    (folder / "tables.json").write_text(json.dumps(TABLES))
    (folder / "dev.json").write_text(json.dumps(QUESTIONS))
    lines: list[dict] = []
    run(folder, pg_url, emit=lines.append)
    calibration = lines.pop(0)  # fitted on the dev half only, before any ranking
    assert calibration["fitted_on"] == "dev" and set(calibration["calibration"]) >= {"v", "crag_low", "crag_high"}
    assert [(x["setting"], x["system"], x["split"]) for x in lines] == [
        (s, sys, split)
        for s in ("per-database", "union")
        for sys in ("cubesage", "bm25", "dense", "rrf")
        for split in ("dev", "test")
    ]
    for line in lines:
        assert line["bench"] == "schema-linking" and line["data"] == "tiny-set" and line["n"] == 2
        assert 0 <= line["R@1"] <= line["R@3"] <= line["R@5"] <= line["R@10"] <= 1
    cubesage = [x for x in lines if x["system"] == "cubesage"]
    assert all(x["R@5"] == 1.0 for x in cubesage if x["setting"] == "per-database")
    assert sum(x["All@5"] for x in cubesage if x["setting"] == "union") >= 1.5  # mean over both halves >= 0.75
    with connection(pg_url) as conn:  # loaded into its own database, not the demo semlayer
        leaked = conn.execute("SELECT count(*) FROM semlayer.asset WHERE asset_id LIKE 'table:music.%'").fetchone()
        assert leaked[0] == 0
        assert conn.execute("SELECT 1 FROM pg_database WHERE datname = 'cubesage_bench_tiny_set'").fetchone()
