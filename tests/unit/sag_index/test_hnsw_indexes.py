"""Every vector table of the PostgreSQL SAG store that kNN searches has an HNSW index (entity names are
token-blocked instead, see 035_sag_vector_indexes.sql), and the bulk-load helper knows them all."""

from __future__ import annotations

import re

from sag_index.backends import _hnsw

SAG_SQL = _hnsw.SQL_FILE.parent / "030_sag.sql"
TOKEN_BLOCKED = {"sag.entity_vectors"}  # ranked by exact cosine over the entities sharing a token


def _vector_tables() -> set[str]:
    """Tables of 030_sag.sql with a vector column."""
    tables = set()
    for match in re.finditer(r"CREATE TABLE IF NOT EXISTS (sag\.\w+)\s*\((.*?)\n\);", SAG_SQL.read_text(), re.S):
        if "vector(" in match.group(2):
            tables.add(match.group(1))
    return tables


def test_every_searched_vector_table_has_an_hnsw_index() -> None:
    text = _hnsw.SQL_FILE.read_text()
    indexed = set(re.findall(r"ON (sag\.\w+)\s+USING hnsw", text))
    assert _vector_tables() > TOKEN_BLOCKED
    assert _vector_tables() - TOKEN_BLOCKED == indexed


def test_indexes_nothing_searches_are_dropped_from_older_databases() -> None:
    assert _hnsw.retired() == ["sag.entity_vectors_name_hnsw", "sag.event_vectors_doc_title_hnsw"]
    assert not set(_hnsw.retired()) & set(_hnsw.names())


def test_the_bulk_helper_drops_exactly_the_indexes_the_file_creates() -> None:
    names = _hnsw.names()
    assert len(names) == _hnsw.SQL_FILE.read_text().count("USING hnsw")
    assert all(name.startswith("sag.") and name.endswith("_hnsw") for name in names)
