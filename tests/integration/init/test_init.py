"""`cubesage init` on a fresh database holding a hand-made warehouse, with drafted models and nothing else:
then questions through the answering service, checked against SQL."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from typer.testing import CliRunner

from answer.cli import app
from cubesage_core import db
from cubesage_core.embedded_pg import EmbeddedPostgres
from cubesage_core.settings import Settings, get_settings

pytestmark = pytest.mark.integration
HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def lending_url(pg_server: EmbeddedPostgres) -> str:
    running = pg_server.running()
    assert running is not None
    name = f"init_test_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(running.url(), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = make_conninfo(**{**conninfo_to_dict(running.url()), "dbname": name})
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute((HERE / "lending.sql").read_text())
    return url


@pytest.fixture(scope="module")
def initialised(lending_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """Run `cubesage init` twice (idempotent) with only a URL, a schema and an empty model folder."""
    work = tmp_path_factory.mktemp("init")
    env = {
        "CUBESAGE_DATABASE_URL": lending_url,
        "CUBESAGE_MODEL_DIR": "",
        "CUBESAGE_GLOSSARY": "",
        "CUBESAGE_DETAIL_VOCABULARY": "",
        "CUBESAGE_WIKI_DIR": "",
    }
    mp = pytest.MonkeyPatch()
    for var in env:
        mp.delenv(var, raising=False)
    mp.setenv("CUBESAGE_DATABASE_URL", lending_url)
    get_settings.cache_clear()
    args = ["init", "--schema", "lending", "--models", str(work / "model"), "--config", str(work / "cubesage.toml")]
    try:
        first = CliRunner().invoke(app, args)
        assert first.exit_code == 0, first.output
        again = CliRunner().invoke(app, args)
        assert again.exit_code == 0, again.output
        assert "kept the 4 model files" in again.output and "cubesage ask" in again.output
        yield work, lending_url
    finally:
        mp.undo()
        get_settings.cache_clear()


def test_init_drafts_models_grants_and_writes_the_config(initialised: tuple[Path, str]) -> None:
    work, url = initialised
    assert sorted(p.name for p in (work / "model").glob("*.yml")) == [
        "books.yml",
        "branches.yml",
        "loans.yml",
        "members.yml",
    ]
    config = (work / "cubesage.toml").read_text()
    assert 'warehouse_schemas = ["lending"]' in config and str(work / "model") in config
    with psycopg.connect(url, autocommit=True) as conn, conn.transaction():
        conn.execute("SET LOCAL ROLE cubesage_reader")
        assert conn.execute("SELECT count(*) FROM lending.loans").fetchone()[0] == 500


def _ask(work: Path, url: str, questions: list[str]) -> list[dict]:
    from pydantic import SecretStr

    from answer.service import Cubesage

    settings = Settings(
        database_url=SecretStr(url),
        warehouse_schemas=["lending"],
        model_dir=work / "model",
        detail_vocabulary=None,
        glossary=None,
    )
    with Cubesage(settings, url=url) as service:
        return [service.ask(q, today=None).to_dict() for q in questions]


def _column(answer: dict, suffix: str) -> list:
    table = answer["table"]
    index = next(i for i, c in enumerate(table["columns"]) if c.endswith(suffix))
    return [row[index] for row in table["rows"]]


def test_questions_on_drafted_models_match_sql(initialised: tuple[Path, str]) -> None:
    work, url = initialised
    fees, genres, loans = _ask(
        work, url, ["Total fee by branch name", "Average list price by genre", "list the loans of Member 7"]
    )
    with psycopg.connect(url) as conn:
        want_fees = dict(
            conn.execute(
                "SELECT b.branch_name, sum(l.l_fee) FROM lending.loans l JOIN lending.members m "
                "ON m.member_id = l.l_member_id JOIN lending.branches b USING (branch_id) GROUP BY 1"
            ).fetchall()
        )
        want_prices = dict(conn.execute("SELECT b_genre, avg(b_listprice) FROM lending.books GROUP BY 1").fetchall())
        want_loans = {
            r[0]
            for r in conn.execute(
                "SELECT l_loankey FROM lending.loans l JOIN lending.members m ON m.member_id = l.l_member_id "
                "WHERE m.member_name = 'Member 7'"
            ).fetchall()
        }
    assert fees["intent"] == "aggregate"
    got_fees = dict(zip(_column(fees, "branch_name"), _column(fees, "l_fee_sum"), strict=True))
    assert {k: Decimal(str(v)) for k, v in got_fees.items()} == want_fees
    got_prices = dict(zip(_column(genres, "b_genre"), _column(genres, "b_listprice_avg"), strict=True))
    assert {k: round(float(v), 4) for k, v in got_prices.items()} == {
        k: round(float(v), 4) for k, v in want_prices.items()
    }
    assert loans["intent"] == "detail"
    assert set(_column(loans, "l_loankey")) == want_loans


def test_refusals_describe_this_warehouse(initialised: tuple[Path, str]) -> None:
    work, url = initialised
    (answer,) = _ask(work, url, ["what's the weather tomorrow?"])
    assert "books, branches, loans, members" in answer["text"] and "(2024-01 to 2025-04)" in answer["text"]


def test_a_setup_role_without_admin_on_cubesage_roles_gets_the_fix_then_succeeds(
    pg_server: EmbeddedPostgres, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database owner with CREATEROLE (no superuser) on a server whose cubesage roles another database's
    setup made: one error line naming what to grant, no traceback; after the grant, init succeeds."""
    running = pg_server.running()
    assert running is not None
    role, name = f"owner_{uuid.uuid4().hex[:8]}", f"init_owner_{uuid.uuid4().hex[:8]}"
    admin = running.url()
    with psycopg.connect(admin, autocommit=True) as conn:
        for existing in (db.READER_ROLE, db.API_ROLE):  # as another database's setup left them
            conn.execute(
                f"DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{existing}') "
                f"THEN CREATE ROLE {existing}; END IF; END $$"
            )
        conn.execute(f'CREATE ROLE "{role}" LOGIN CREATEROLE')
        conn.execute(f'CREATE DATABASE "{name}" OWNER "{role}"')
    owner_url = make_conninfo(**{**conninfo_to_dict(admin), "dbname": name, "user": role})
    try:
        with psycopg.connect(make_conninfo(**{**conninfo_to_dict(admin), "dbname": name}), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION vector")  # what the pgvector error tells a superuser to run
        with psycopg.connect(owner_url, autocommit=True) as conn:
            conn.execute((HERE / "lending.sql").read_text())
        for var in (
            "CUBESAGE_DATABASE_URL",
            "CUBESAGE_MODEL_DIR",
            "CUBESAGE_GLOSSARY",
            "CUBESAGE_WIKI_DIR",
            "CUBESAGE_DETAIL_VOCABULARY",
        ):
            monkeypatch.delenv(var, raising=False)
        get_settings.cache_clear()
        args = [
            "init",
            "--database-url",
            owner_url,
            "--schema",
            "lending",
            "--models",
            str(tmp_path / "model"),
            "--config",
            str(tmp_path / "cubesage.toml"),
        ]
        refused = CliRunner().invoke(app, args)
        assert refused.exit_code == 2, refused.output
        assert "WITH ADMIN OPTION" in refused.output and "Traceback" not in refused.output
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'GRANT cubesage_reader, cubesage_api TO "{role}" WITH ADMIN OPTION')
        done = CliRunner().invoke(app, args)
        assert done.exit_code == 0, done.output
        assert "cubesage is ready" in done.output
    finally:
        get_settings.cache_clear()
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'REVOKE cubesage_reader FROM cubesage_api GRANTED BY "{role}"')  # its setup's grant
            conn.execute(f'DROP ROLE IF EXISTS "{role}"')


def _settings_reading_a_missing_table(work: Path, url: str, folder: Path) -> Settings:
    """Settings whose model (a copy of the initialised one) reads a table the warehouse lacks."""
    import shutil

    from pydantic import SecretStr

    shutil.copytree(work / "model", folder / "model")
    books = folder / "model" / "books.yml"
    books.write_text(books.read_text().replace("lending.books", "lending.no_such_books"))
    return Settings(
        database_url=SecretStr(url), warehouse_schemas=["lending"], model_dir=folder / "model", glossary=None
    )


def test_a_model_that_reads_a_missing_table_is_a_config_error(initialised: tuple[Path, str], tmp_path: Path) -> None:
    from answer.service import Cubesage
    from cubesage_core.settings import ConfigError

    work, url = initialised
    settings = _settings_reading_a_missing_table(work, url, tmp_path)
    with pytest.raises(ConfigError, match=r"does not match the warehouse .*no_such_books"):
        Cubesage(settings, url=url)


def test_serve_with_a_model_the_warehouse_cannot_serve_prints_one_error_line(
    initialised: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from answer import serve_cli

    work, url = initialised
    settings = _settings_reading_a_missing_table(work, url, tmp_path)
    monkeypatch.setattr(serve_cli, "get_settings", lambda: settings)
    done = CliRunner().invoke(app, ["serve", "--port", "1"])
    assert done.exit_code == 2, done.output
    assert "error:" in done.output and "no_such_books" in done.output
    assert isinstance(done.exception, SystemExit)  # the clear exit, not an exception out of create_app
