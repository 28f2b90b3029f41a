"""The README's own-warehouse steps each work on their own, in an odd order, on a fresh database (no
`cubesage init`): each command creates the schemas, role and grants it needs first."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from typer.testing import CliRunner, Result

from answer.cli import app
from cubesage_core.embedded_pg import EmbeddedPostgres
from cubesage_core.settings import get_settings
from tests.integration.init._own import DEMO_SETTINGS, fresh_database

pytestmark = pytest.mark.integration
HERE = Path(__file__).resolve().parent
MEMBER_7_LOANS = (
    "SELECT l.l_loankey FROM lending.loans l JOIN lending.members m ON m.member_id = l.l_member_id "
    "WHERE m.member_name = 'Member 7'"
)


@pytest.fixture(scope="module")
def url(pg_server: EmbeddedPostgres) -> Iterator[str]:
    with fresh_database(pg_server, "steps_alone") as fresh:
        with psycopg.connect(fresh, autocommit=True) as conn:
            conn.execute((HERE / "lending.sql").read_text())
        yield fresh


@pytest.fixture(scope="module")
def work(url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A user's folder and environment: database URL, warehouse schema and model folder, nothing else."""
    folder = tmp_path_factory.mktemp("steps")
    mp = pytest.MonkeyPatch()
    for var in DEMO_SETTINGS:
        mp.delenv(var, raising=False)
    mp.setenv("CUBESAGE_CONFIG", str(folder / "absent.toml"))
    mp.setenv("CUBESAGE_DATABASE_URL", url)
    mp.setenv("CUBESAGE_WAREHOUSE_SCHEMAS", "lending")
    mp.setenv("CUBESAGE_MODEL_DIR", str(folder / "model"))
    get_settings.cache_clear()
    try:
        yield folder
    finally:
        mp.undo()
        get_settings.cache_clear()


def _run(*args: str) -> Result:
    get_settings.cache_clear()
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    return result


def _json(result: Result) -> dict:
    return json.loads(next(line for line in reversed(result.output.splitlines()) if line.startswith("{")))


def test_each_step_on_its_own(work: Path, url: str) -> None:
    _run("model", "draft", "--schema", "lending", "--out", str(work / "model"))
    # a detail question before anything is exported or indexed: answered from the model and the data
    loans = _json(_run("ask", "list the loans of Member 7", "--json"))
    with psycopg.connect(url) as conn:
        want = {row[0] for row in conn.execute(MEMBER_7_LOANS).fetchall()}
    key = next(i for i, c in enumerate(loans["table"]["columns"]) if c.endswith("l_loankey"))
    assert loans["intent"] == "detail" and {row[key] for row in loans["table"]["rows"]} == want
    fees = _run("cube", "query", '{"measures": ["loans.l_fee_sum"]}')
    with psycopg.connect(url) as conn:
        total = conn.execute("SELECT sum(l_fee) FROM lending.loans").fetchone()[0]
    assert f"{float(total)}" in fees.output
    wiki = work / "wiki"
    wiki.mkdir()
    (wiki / "late.md").write_text("# Late returns\n\nA member who keeps a book past its due day pays a fee.\n")
    _run("sag", "index", "--warehouse", "--wiki", str(wiki))
    with psycopg.connect(url) as conn:
        tables = conn.execute("SELECT meta->'tables' FROM sag.source_chunk WHERE source = 'late.md'").fetchone()[0]
    assert set(tables) == {"lending.members", "lending.books"}  # by the model's nouns "member", "book"
    (work / "glossary.yaml").write_text(
        "terms:\n  - {id: fines, term: fines, language: en, maps_to: metric:loans.l_fee_sum, "
        "synonyms: [late fees], definition: SUM(l_fee).}\n"
    )
    assert _json(_run("fourengine", "load-glossary", str(work / "glossary.yaml")))["terms"] == 1
    assert _json(_run("cube", "export"))["inserted"] > 0
    (work / "suite.yaml").write_text(
        "today: 2025-06-30\ncases:\n  - id: fines\n    split: dev\n    question: total fines\n"
        "    expect:\n      intent: aggregate\n      answer_sql: SELECT sum(l_fee) FROM lending.loans\n"
    )
    output = _run("regress", str(work / "suite.yaml"), "--json").output
    case = next(json.loads(line) for line in output.splitlines() if line.startswith('{"id": "fines"'))
    assert case["outcome"] == "passed", case
