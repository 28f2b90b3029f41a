"""What `cubesage init` writes to cubesage.toml: the user's settings, absolute paths, the embedded data dir."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from answer.init import InitConfig, InitRun, _write_config
from cubesage_core.settings import Settings


def _written(tmp_path: Path, url: str | None, before: str = "") -> dict:
    path = tmp_path / "cubesage.toml"
    if before:
        path.write_text(before, encoding="utf-8")
    config = InitConfig(database_url=url, schemas=("sales", "finance"), model_dir=tmp_path / "model", config_path=path)
    _write_config(InitRun(config, Settings(_env_file=None, data_dir=tmp_path / "data")))
    return tomllib.loads(path.read_text(encoding="utf-8"))


def test_an_external_database_is_written_without_a_data_dir(tmp_path: Path) -> None:
    values = _written(tmp_path, "postgresql://me@db/analytics", before='warehouse_schema = "old"\napi_port = 9000\n')
    assert values == {
        "api_port": 9000,
        "database_url": "postgresql://me@db/analytics",
        "warehouse_schemas": ["sales", "finance"],
        "model_dir": str((tmp_path / "model").resolve()),
    }


def test_the_embedded_server_keeps_its_data_dir_for_later_commands(tmp_path: Path) -> None:
    values = _written(tmp_path, None)
    assert "database_url" not in values and values["data_dir"] == str((tmp_path / "data").resolve())


def test_environment_variables_that_would_override_the_file_are_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUBESAGE_DATABASE_URL", "postgresql://me@db/postgres")  # another database
    monkeypatch.setenv("CUBESAGE_WAREHOUSE_SCHEMAS", "sales, finance")  # the same schemas
    monkeypatch.setenv("CUBESAGE_MODEL_DIR", str(tmp_path / "model"))  # the same folder
    path = tmp_path / "cubesage.toml"
    config = InitConfig(
        database_url="postgresql://me@db/analytics",
        schemas=("sales", "finance"),
        model_dir=tmp_path / "model",
        config_path=path,
    )
    line = _write_config(InitRun(config, Settings(_env_file=None)))
    assert line.endswith("CUBESAGE_DATABASE_URL set in this environment override it: unset it before later commands")
