"""``cubesage sag`` commands against a real database: index, search --explain, status, bad input."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cubesage_core.settings import get_settings
from sag_index.cli import app
from tests.integration.sag_index.conftest import fresh_database

pytestmark = pytest.mark.integration


@pytest.fixture
def cli_env(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    url = fresh_database(pg_url, "sag_cli")
    monkeypatch.setenv("CUBESAGE_DATABASE_URL", url)
    monkeypatch.setenv("CUBESAGE_EMBEDDING_BACKEND", "hash")
    monkeypatch.delenv("CUBESAGE_ES_URL", raising=False)
    get_settings.cache_clear()
    yield url
    get_settings.cache_clear()


def test_index_search_explain_status(cli_env: str, tmp_path: Path) -> None:
    (tmp_path / "kettles.md").write_text("# Lotus K3 kettle\n\nThe Lotus K3 kettle is made by Lotus in Hangzhou.\n")
    (tmp_path / "notes.txt").write_text("Hangzhou is a city in East China, home of the Lotus brand.\n")
    runner = CliRunner()
    result = runner.invoke(app, ["index", str(tmp_path)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["chunks_processed"] == 2 and report["events_written"] == 2

    result = runner.invoke(app, ["search", "Who makes the Lotus K3 kettle?", "--explain", "--top-k", "2"])
    assert result.exit_code == 0, result.output
    explain = json.loads(result.stdout)
    assert len(explain["steps"]) == 8 and explain["events"][0]["title"] == "Lotus K3 kettle"

    status = json.loads(runner.invoke(app, ["status"]).stdout)
    assert status["relational"]["events"] == 2 and status["store"]["backend"] == "postgres"

    again = runner.invoke(app, ["index", str(tmp_path)])
    assert json.loads(again.stdout.strip().splitlines()[-1])["chunks_processed"] == 0


def test_bad_input_is_a_clear_error(cli_env: str, tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text("{oops")
    result = CliRunner().invoke(app, ["index", str(tmp_path / "broken.json")])
    assert result.exit_code == 2 and "invalid JSON" in " ".join(result.output.split())  # rich may wrap the line
    empty = CliRunner().invoke(app, ["search", "anything"])
    assert empty.exit_code == 2 and "NotIndexedError" in empty.output
    assert CliRunner().invoke(app, ["index"]).exit_code == 2


def test_search_llm_mode_through_the_stub(cli_env: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.llm_stub import dspy_reply, openai_stub

    (tmp_path / "a.md").write_text("# Lotus K3 kettle\n\nThe Lotus K3 kettle is made by Lotus.\n")
    runner = CliRunner()
    assert runner.invoke(app, ["index", str(tmp_path)]).exit_code == 0

    def script(body: dict) -> str:
        prompt = body["messages"][-1]["content"]
        return dspy_reply(selected=[0]) if "candidates" in prompt else dspy_reply(entities=["Lotus K3 kettle"])

    with openai_stub(script) as stub:
        monkeypatch.setenv("CUBESAGE_LLM_URL", stub.url)
        monkeypatch.setenv("CUBESAGE_LLM_MODEL", "openai/stub")
        get_settings.cache_clear()
        result = runner.invoke(app, ["search", "Who makes the Lotus K3 kettle?", "--llm", "--explain"])
    assert result.exit_code == 0, result.output
    explain = json.loads(result.stdout)
    assert explain["modes"] == {"ner": "llm", "selection": "llm"}
    assert explain["events"][0]["title"] == "Lotus K3 kettle"


def test_index_llm_with_a_model_the_lm_refuses_is_a_clear_error(
    cli_env: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.md").write_text("# Lotus K3 kettle\n\nThe Lotus K3 kettle is made by Lotus.\n")
    monkeypatch.setenv("CUBESAGE_LLM_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("CUBESAGE_LLM_MODEL", "openai/")  # dspy.LM: a provider prefix without a model id
    get_settings.cache_clear()
    result = CliRunner().invoke(app, ["index", str(tmp_path), "--llm"])
    assert result.exit_code == 2 and "cannot be used" in result.output and "no model id" in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
