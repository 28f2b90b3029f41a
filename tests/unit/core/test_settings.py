"""Settings: env vars, TOML file, masking of secrets."""

from __future__ import annotations

from pathlib import Path

import pytest

from cubesage_core.settings import Settings


def test_defaults_select_embedded_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("CUBESAGE_DATABASE_URL", "CUBESAGE_CUBE_URL", "CUBESAGE_ES_URL", "CUBESAGE_LLM_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CUBESAGE_CONFIG", "/nonexistent/cubesage.toml")
    s = Settings()
    assert s.database_url is None and s.cube_url is None and s.es_url is None
    assert s.llm_mode is False
    assert s.pg_data_dir == s.data_dir / "pg"


def test_env_overrides_toml(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    toml = tmp_path / "cubesage.toml"
    toml.write_text('cube_url = "http://cube:4000"\nllm_model = "openai/from-toml"\napi_port = 9000\n')
    monkeypatch.setenv("CUBESAGE_CONFIG", str(toml))
    monkeypatch.setenv("CUBESAGE_API_PORT", "9100")
    s = Settings()
    assert s.cube_url == "http://cube:4000"
    assert s.llm_model == "openai/from-toml"
    assert s.api_port == 9100


def test_masked_hides_secrets_and_url_passwords(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUBESAGE_DATABASE_URL", "postgresql://app:hunter2@db:5432/shop")
    monkeypatch.setenv("CUBESAGE_CUBE_SECRET", "s" * 40)
    monkeypatch.setenv("CUBESAGE_LLM_API_KEY", "sk-live-123")
    masked = Settings().masked()
    text = repr(masked)
    assert "hunter2" not in text and "s" * 40 not in text and "sk-live-123" not in text
    assert masked["database_url"] == "postgresql://app:********@db:5432/shop"
    assert masked["cube_secret"] == "********"


def test_invalid_value_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUBESAGE_API_PORT", "not-a-port")
    with pytest.raises(ValueError, match="api_port"):
        Settings()
