"""Schema bootstrap: reader grants over several schemas, the missing-pgvector error, the list setting."""

from __future__ import annotations

import psycopg
import pytest
from typer.testing import CliRunner

from cubesage_core import db
from cubesage_core.settings import REPO_ROOT, Settings, get_settings


class Recorder:
    def __init__(self, fail_on: str | None = None) -> None:
        self.statements: list[str] = []
        self.fail_on = fail_on

    def execute(self, query, params=None):
        text = query if isinstance(query, str) else query.as_string(None)
        if self.fail_on and self.fail_on in text:
            raise psycopg.errors.FeatureNotSupported('extension "vector" is not available')
        self.statements.append(text)


def test_reader_is_granted_on_every_schema_with_quoted_names() -> None:
    conn = Recorder()
    db.grant_reader(conn, ["sales", 'odd "name"'])
    assert conn.statements[:4] == [
        'CREATE SCHEMA IF NOT EXISTS "sales"',
        'GRANT USAGE ON SCHEMA "sales" TO "cubesage_reader"',
        'GRANT SELECT ON ALL TABLES IN SCHEMA "sales" TO "cubesage_reader"',
        'ALTER DEFAULT PRIVILEGES IN SCHEMA "sales" GRANT SELECT ON TABLES TO "cubesage_reader"',
    ]
    assert 'GRANT USAGE ON SCHEMA "odd ""name""" TO "cubesage_reader"' in conn.statements


def test_missing_pgvector_names_the_statement_to_run() -> None:
    with pytest.raises(db.DatabaseSetupError, match="CREATE EXTENSION vector;"):
        db.create_extensions(Recorder(fail_on="vector"))


def test_cli_reports_missing_pgvector_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from answer.cli import app

    def no_vector(url: str, schemas=None) -> None:
        db.create_extensions(Recorder(fail_on="vector"))

    monkeypatch.setattr(db, "apply_schema", no_vector)
    monkeypatch.setenv("CUBESAGE_DATABASE_URL", "postgresql://nobody@127.0.0.1:1/none")
    monkeypatch.setenv("CUBESAGE_MODEL_DIR", str(REPO_ROOT / "demo" / "model"))
    get_settings.cache_clear()
    try:
        result = CliRunner().invoke(app, ["cube", "export"])
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 2
    assert "CREATE EXTENSION vector;" in result.output and "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_warehouse_schemas_from_env_and_the_old_single_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUBESAGE_WAREHOUSE_SCHEMAS", "sales, finance")
    assert Settings().warehouse_schemas == ["sales", "finance"]
    monkeypatch.delenv("CUBESAGE_WAREHOUSE_SCHEMAS")
    monkeypatch.setenv("CUBESAGE_WAREHOUSE_SCHEMA", "legacy")
    assert Settings().warehouse_schemas == ["legacy"] and Settings().warehouse_schema == "legacy"
    assert Settings(warehouse_schema="kw").warehouse_schemas == ["kw"]
