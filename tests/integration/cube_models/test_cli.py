"""``cubesage cube query`` with both backends, and clear errors for bad input."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cube_models.cli import app
from cubesage_core.settings import get_settings

pytestmark = pytest.mark.integration
QUERY = json.dumps({"measures": ["orders.count"], "dimensions": ["orders.status"]})


@pytest.fixture()
def cli_env(pg_url: str, cube, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("CUBESAGE_DATABASE_URL", pg_url)
    monkeypatch.setenv("CUBESAGE_CUBE_URL", cube.url)
    monkeypatch.setenv("CUBESAGE_CUBE_SECRET", cube.secret)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_query_both_backends_print_rows_and_sql(cli_env) -> None:
    runner = CliRunner()
    outputs = {}
    for backend in ("builtin", "cube"):
        result = runner.invoke(app, ["query", QUERY, "--backend", backend, "--json"])
        assert result.exit_code == 0, result.output
        outputs[backend] = json.loads(result.output)
        assert "SELECT" in outputs[backend]["sql"].upper()
    key = lambda r: r["orders.status"]  # noqa: E731
    assert sorted(outputs["builtin"]["rows"], key=key) == sorted(outputs["cube"]["rows"], key=key)
    table = runner.invoke(app, ["query", QUERY])  # auto: Cube is configured
    assert table.exit_code == 0 and "orders.count" in table.output and "SQL" in table.output
    assert "from cube" in table.output


@pytest.mark.parametrize(
    "args,expected",
    [
        (["query", "{not json"], "not valid JSON"),
        (["query", '{"measures": ["orders.nope"]}', "--backend", "builtin"], "unknown member"),
        (["query", '{"measures": ["orders.nope"]}', "--backend", "cube"], "not found"),
        (["query", QUERY, "--backend", "oracle"], "unknown backend"),
    ],
)
def test_bad_input_exits_2_with_a_message(cli_env, args: list[str], expected: str) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and expected in result.output


def test_validate_and_sql_commands(cli_env) -> None:
    runner = CliRunner()
    bad = runner.invoke(app, ["validate", '{"measures": ["orders.cuont"]}'])
    assert bad.exit_code == 1 and "orders.count" in bad.output
    sql = runner.invoke(
        app,
        [
            "sql",
            '{"measures": ["orders.count"], "filters": [{"member": "orders.status", '
            '"operator": "equals", "values": ["x\'y"]}]}',
        ],
    )
    assert sql.exit_code == 0 and "$1" in sql.output and "x'y" in sql.output.splitlines()[-1]
