"""Typed settings: one object built from ``CUBESAGE_*`` env vars and an optional TOML file.

Absent URLs select the embedded defaults: no database URL -> embedded PostgreSQL,
no Cube URL -> the built-in compiler, no Elasticsearch URL -> the PostgreSQL
vector/BM25 backend, no LLM endpoint -> fast (deterministic) mode.
"""

from __future__ import annotations

import os
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import SecretStr
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA_DIR = Path.home() / ".local" / "share" / "cubesage"


def _toml_path() -> Path | None:
    explicit = os.environ.get("CUBESAGE_CONFIG")
    if explicit:
        return Path(explicit)
    local = Path.cwd() / "cubesage.toml"
    return local if local.exists() else None


class Settings(BaseSettings):
    """Effective configuration of one cubesage process."""

    model_config = SettingsConfigDict(env_prefix="CUBESAGE_", extra="ignore")

    # storage
    data_dir: Path = DEFAULT_DATA_DIR
    database_url: SecretStr | None = None
    pg_port: int | None = None
    warehouse_schema: str = "warehouse"
    statement_timeout_ms: int = 5000

    # semantic layer
    cube_url: str | None = None
    cube_secret: SecretStr | None = None
    cube_fallback_builtin: bool = True
    model_dir: Path = REPO_ROOT / "demo" / "model"
    # detail path words and display choices the Cube models cannot say (YAML; a missing file = derive only;
    # entries naming tables absent from the models are ignored)
    detail_vocabulary: Path = REPO_ROOT / "demo" / "detail_vocabulary.yaml"
    query_row_cap: int = 50_000
    default_limit: int = 10_000
    # built-in backend result cache: seconds between reads of the warehouse refresh key (0 = no cache)
    warehouse_cache_refresh_s: float = 10.0

    # SAG vector/BM25 store
    es_url: str | None = None
    es_index_prefix: str = "cubesage_"
    es_fallback_postgres: bool = True
    # SAG entity-name vectors: "hash" (character n-grams: spelling-level matches at cosine >= 0.9) or "use"
    sag_name_embedding: Literal["use", "hash"] = "hash"
    # SAG recall memo: seconds between reads of the sag schema's refresh key (0 = no memo)
    sag_cache_refresh_s: float = 10.0

    # LLM (absent endpoint = fast mode)
    llm_url: str | None = None
    llm_model: str = "openai/gpt-4o-mini"
    llm_api_key: SecretStr | None = None
    llm_timeout_s: float = 20.0

    # embeddings
    embedding_backend: Literal["use", "hash"] = "use"

    # demo content
    demo_dir: Path = REPO_ROOT / "demo"
    today: date | None = None

    # API
    api_host: str = "127.0.0.1"
    api_port: int = 8088
    api_require_keys: bool | None = None
    api_rate_limit_per_min: int = 600
    api_max_question_chars: int = 1000
    api_max_body_bytes: int = 2_000_000
    cors_origins: list[str] = []
    api_session_ttl_s: float = 1800.0
    api_max_sessions: int = 10_000
    api_answer_cache_ttl_s: float = 300.0
    api_answer_cache_size: int = 2048
    api_max_concurrent_answers: int = 4

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        toml = _toml_path()
        if toml is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=toml))
        return tuple(sources)

    @property
    def pg_data_dir(self) -> Path:
        return self.data_dir / "pg"

    @property
    def llm_mode(self) -> bool:
        return bool(self.llm_url)

    def masked(self) -> dict[str, Any]:
        """Settings as plain values, secrets and URL passwords masked."""
        out: dict[str, Any] = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            if isinstance(value, SecretStr):
                secret = value.get_secret_value()
                value = _mask_url(secret) if "://" in secret else "********"
            elif isinstance(value, Path | date):
                value = str(value)
            out[name] = value
        return out


def _mask_url(url: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":********@")
    return urlunsplit(parts._replace(netloc=netloc))


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Process-wide settings (cached; call ``get_settings.cache_clear()`` after changing env)."""
    return Settings()
