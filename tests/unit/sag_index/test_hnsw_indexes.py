"""Every vector table of the PostgreSQL SAG store has an HNSW index, and the bulk-load helper knows them all."""

from __future__ import annotations

import re

from sag_index.backends import _hnsw

SAG_SQL = _hnsw.SQL_FILE.parent / "030_sag.sql"


def _vector_tables() -> set[str]:
    """Tables of 030_sag.sql with a vector column."""
    tables = set()
    for match in re.finditer(r"CREATE TABLE IF NOT EXISTS (sag\.\w+)\s*\((.*?)\n\);", SAG_SQL.read_text(), re.S):
        if "vector(" in match.group(2):
            tables.add(match.group(1))
    return tables


def test_every_vector_table_has_an_hnsw_index() -> None:
    text = _hnsw.SQL_FILE.read_text()
    indexed = set(re.findall(r"ON (sag\.\w+)\s+USING hnsw", text))
    assert _vector_tables() and _vector_tables() <= indexed


def test_the_bulk_helper_drops_exactly_the_indexes_the_file_creates() -> None:
    names = _hnsw.names()
    assert len(names) == _hnsw.SQL_FILE.read_text().count("USING hnsw")
    assert all(name.startswith("sag.") and name.endswith("_hnsw") for name in names)
