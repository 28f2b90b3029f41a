"""Shared by the own-warehouse tests: a fresh database on the session's server, `cubesage init` on it with
the settings a user has (the cubesage.toml init writes), the real API over that, answers read against SQL."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from typer.testing import CliRunner

from answer.cli import app
from cubesage_core.embedded_pg import EmbeddedPostgres
from cubesage_core.scratch import temporary_database
from cubesage_core.settings import get_settings
from tests.live_api import LiveApi, running_api

# what the suite's conftest points at the demo; a user's own warehouse has none of it
DEMO_SETTINGS = (
    "CUBESAGE_MODEL_DIR",
    "CUBESAGE_GLOSSARY",
    "CUBESAGE_DETAIL_VOCABULARY",
    "CUBESAGE_WIKI_DIR",
    "CUBESAGE_TODAY",
    "CUBESAGE_WAREHOUSE_SCHEMAS",
    "CUBESAGE_DATABASE_URL",
)
# TPC-H joins over 600k line items take seconds on a busy 2-core machine (a user setting, not a shortcut)
TIMEOUT_MS = "120000"


@dataclass(frozen=True)
class Case:
    """A question, the intent it must get, and SQL whose rows the answer's ``columns`` must hold."""

    question: str
    intent: str
    sql: str
    columns: tuple[str, ...]  # answer columns (by name ending) in the order of the SQL's columns

    def __str__(self) -> str:
        return self.question


@contextmanager
def fresh_database(server: EmbeddedPostgres, prefix: str) -> Iterator[str]:
    """A new, empty database on the session's server (no cubesage schema, no pgvector yet); dropped after."""
    running = server.running()
    assert running is not None
    with temporary_database(running.url(), prefix, setup="none") as url:
        yield url


@contextmanager
def initialised_api(url: str, work: Path, init_args: Sequence[str]) -> Iterator[LiveApi]:
    """Run `cubesage init ARGS` (with --database-url and --config), then serve the API with the settings it
    wrote (CUBESAGE_CONFIG = that cubesage.toml, as `cubesage serve` in that folder would read them)."""
    config = work / "cubesage.toml"
    mp = pytest.MonkeyPatch()
    try:
        for var in DEMO_SETTINGS:
            mp.delenv(var, raising=False)
        mp.setenv("CUBESAGE_CONFIG", str(config))
        mp.setenv("CUBESAGE_STATEMENT_TIMEOUT_MS", TIMEOUT_MS)
        get_settings.cache_clear()
        result = CliRunner().invoke(app, ["init", "--database-url", url, "--config", str(config), *init_args])
        assert result.exit_code == 0, result.output
        assert "cubesage is ready" in result.output, result.output
        get_settings.cache_clear()
        settings = get_settings().model_copy(update={"api_rate_limit_per_min": 0})
        with running_api(settings, url) as api:
            yield api
    finally:
        mp.undo()
        get_settings.cache_clear()


def ask(api: LiveApi, question: str) -> dict[str, Any]:
    response = httpx.post(f"{api.url}/v1/ask", json={"question": question}, timeout=180)
    assert response.status_code == 200, response.text
    return response.json()


def _cell(value: Any) -> Any:
    """One comparable value: numbers as floats, dates and timestamps as their day, text as is."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float | Decimal):
        return float(value)
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()[:10]
    if isinstance(value, str) and len(value) >= 10 and value[4:5] == "-" and value[7:8] == "-" and value[:4].isdigit():
        return value[:10]
    return value


def _column_index(table: dict[str, Any], name: str) -> int:
    columns = table["columns"]
    found = [i for i, c in enumerate(columns) if c == name or c.endswith("." + name)]
    assert found, f"no column {name!r} among {columns}"
    return found[0]


def answer_rows(answer: dict[str, Any], columns: Sequence[str]) -> list[tuple[Any, ...]]:
    table = answer["table"]
    picks = [_column_index(table, c) for c in columns]
    return sorted((tuple(_cell(row[i]) for i in picks) for row in table["rows"]), key=repr)


def sql_rows(url: str, query: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        return sorted((tuple(_cell(v) for v in row) for row in conn.execute(query).fetchall()), key=repr)


def check(api: LiveApi, url: str, case: Case) -> None:
    """The answer's intent, and its rows (the named columns) equal the SQL's rows, numbers to 1e-9."""
    answer = ask(api, case.question)
    assert answer["intent"] == case.intent, (answer["intent"], answer["text"])
    got, want = answer_rows(answer, case.columns), sql_rows(url, case.sql)
    assert want, f"the gold SQL of {case.question!r} returns no rows"
    assert len(got) == len(want) and all(map(_same_row, got, want)), (answer["text"], got[:5], want[:5])


def _same_row(got: tuple[Any, ...], want: tuple[Any, ...]) -> bool:
    return len(got) == len(want) and all(
        math.isclose(g, w, rel_tol=1e-9) if isinstance(g, float) and isinstance(w, float) else g == w
        for g, w in zip(got, want, strict=True)
    )
