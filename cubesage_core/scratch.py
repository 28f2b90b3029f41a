"""Scratch databases: a database of its own on the server of a URL, for benchmarks and tests.

:func:`scratch_database` creates one (or starts it afresh), sets it up (pgvector and pg_trgm, then the
cubesage schema, or less) and returns its URL; :func:`temporary_database` does the same for a uniquely named
one and drops it on exit. The database of the URL itself is only used to create and drop them.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from cubesage_core.db import apply_schema, create_extensions

Setup = Literal["none", "extensions", "schema"]  # empty | pgvector + pg_trgm | those and the cubesage schema


def database_on(url: str, name: str) -> str:
    """``url`` (URL or key=value conninfo) for the database ``name`` on the same server, as the same role."""
    return make_conninfo("", **{**conninfo_to_dict(url), "dbname": name})


def unique_name(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def scratch_database(url: str, name: str, *, fresh: bool = False, setup: Setup = "schema") -> str:
    """The URL of database ``name`` on ``url``'s server: created when absent (dropped first when ``fresh``),
    then set up as ``setup`` says (idempotent)."""
    with psycopg.connect(url, autocommit=True) as conn:
        if fresh:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    target = database_on(url, name)
    if setup == "extensions":
        with psycopg.connect(target, autocommit=True) as conn:  # before pgvector is registered on a connection
            create_extensions(conn)
    elif setup == "schema":
        apply_schema(target)  # creates the extensions first
    return target


def drop_database(url: str, name: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@contextmanager
def temporary_database(url: str, prefix: str, *, setup: Setup = "schema", keep: bool = False) -> Iterator[str]:
    """A new database named ``prefix_<random>`` on ``url``'s server, set up as ``setup``; dropped on exit
    unless ``keep``."""
    name = unique_name(prefix)
    target = scratch_database(url, name, setup=setup)
    try:
        yield target
    finally:
        if not keep:
            drop_database(url, name)
