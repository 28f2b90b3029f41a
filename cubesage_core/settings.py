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
from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    NoDecode,
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


class ConfigError(ValueError):
    """A setting the command needs is missing or wrong."""


class Settings(BaseSettings):
    """Effective configuration of one cubesage process."""

    model_config = SettingsConfigDict(env_prefix="CUBESAGE_", extra="ignore")

    # storage
    data_dir: Path = DEFAULT_DATA_DIR
    database_url: SecretStr | None = None
    pg_port: int | None = None
    # the PostgreSQL schemas the warehouse lives in (env ``a,b``); the first is the default for unqualified tables
    warehouse_schemas: Annotated[list[str], NoDecode] = ["warehouse"]
    statement_timeout_ms: int = 5000

    # semantic layer
    cube_url: str | None = None
    cube_secret: SecretStr | None = None
    cube_fallback_builtin: bool = True
    # Cube YAML models (``cubesage init`` writes it to cubesage.toml; ``cubesage demo`` uses demo/model)
    model_dir: Path | None = None
    # detail path words and display choices the Cube models cannot say (YAML; unset or a missing file = derive
    # only; entries naming tables absent from the models are ignored)
    detail_vocabulary: Path | None = None
    # wiki pages about the warehouse tables (``cubesage init --wiki``, ``sag index --warehouse``)
    wiki_dir: Path | None = None
    # business terms (YAML, the format of ``fourengine load-glossary``): answer labels in both languages
    glossary: Path | None = None
    query_row_cap: int = 50_000
    default_limit: int = 10_000
    # built-in backend result cache: seconds between reads of the warehouse refresh key (0 = no cache)
    warehouse_cache_refresh_s: float = 10.0
    rollup_refresh: bool = True  # the built-in backend rebuilds stale rollup tables in the background

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
    llm_timeout_s: Annotated[float, Field(gt=0)] = 20.0  # one call, at most (the question deadline cuts it)
    llm_deadline_s: Annotated[float, Field(gt=0)] = 8.0  # one question's LLM calls end within this
    llm_max_calls: Annotated[int, Field(ge=0)] = 12  # LLM calls per question
    llm_temperature: float = 0.0  # chat models
    llm_max_tokens: Annotated[int, Field(gt=0)] = 1024  # chat models
    # reasoning models (o1/o3/o4, gpt-5*): DSPy 3.4 wants temperature 1.0/None and at least 16,000 tokens
    llm_reasoning_max_tokens: Annotated[int, Field(ge=16_000)] = 16_000
    llm_reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = "low"
    # circuit breaker: after this many consecutive failed calls, LLM mode pauses for llm_breaker_pause_s
    llm_breaker_failures: Annotated[int, Field(ge=1)] = 3
    llm_breaker_pause_s: Annotated[float, Field(ge=0)] = 30.0
    llm_sag_steps: bool = True  # SAG detail recall: step 1 NER and step 7 selection by the LLM
    llm_crag_grade: bool = True  # the LLM grades the retrieved context before generation (CRAG)
    llm_selection_tokens: Annotated[int, Field(gt=0)] = 1500  # SAG step 7: candidate text shown to the LLM

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
    # the role the API connects as (unset: database_url's server as cubesage_api, no password); never a superuser
    api_database_url: SecretStr | None = None
    # /v1/ingest/* needs a key with the ingest scope even in keyless loopback mode, unless this is false
    api_ingest_requires_key: bool = True
    # failed authentications (missing, invalid or revoked keys) per client address per minute before 429
    api_auth_failures_per_min: int = 20
    # proxies (IPs or CIDRs, env ``a,b``) whose X-Forwarded-For names the client; unset: the socket's peer
    api_trusted_proxies: Annotated[list[str], NoDecode] = []
    # Host names accepted in keyless loopback mode besides localhost / loopback addresses (env ``a,b``)
    api_allowed_hosts: Annotated[list[str], NoDecode] = []
    api_max_json_depth: int = 32

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

    @model_validator(mode="before")
    @classmethod
    def _single_schema(cls, data: Any) -> Any:
        """Accept the former single ``warehouse_schema`` (argument, TOML key or env var)."""
        if isinstance(data, dict) and "warehouse_schemas" not in data:
            old = data.pop("warehouse_schema", None) or os.environ.get("CUBESAGE_WAREHOUSE_SCHEMA")
            if old:
                data["warehouse_schemas"] = old
        return data

    @field_validator("llm_reasoning_effort", mode="before")
    @classmethod
    def _no_effort(cls, value: Any) -> Any:
        """An empty value or ``none`` sends no reasoning effort."""
        return None if isinstance(value, str) and value.strip().lower() in ("", "none") else value

    @field_validator("warehouse_schemas", mode="before")
    @classmethod
    def _schema_list(cls, value: Any) -> list[str]:
        items = value.split(",") if isinstance(value, str) else list(value or [])
        schemas = [str(item).strip() for item in items if str(item).strip()]
        if not schemas:
            raise ValueError("at least one warehouse schema is required")
        return schemas

    @field_validator("api_trusted_proxies", "api_allowed_hosts", mode="before")
    @classmethod
    def _comma_list(cls, value: Any) -> list[str]:
        items = value.split(",") if isinstance(value, str) else list(value or [])
        return [str(item).strip() for item in items if str(item).strip()]

    @field_validator("api_trusted_proxies")
    @classmethod
    def _networks(cls, value: list[str]) -> list[str]:
        import ipaddress

        for item in value:
            try:
                ipaddress.ip_network(item, strict=False)
            except ValueError as err:
                raise ValueError(f"api_trusted_proxies: {item!r} is not an IP address or network") from err
        return value

    @property
    def warehouse_schema(self) -> str:
        """The default schema of unqualified table names: the first configured one."""
        return self.warehouse_schemas[0]

    def model_folder(self) -> Path:
        """``model_dir``, or a :class:`ConfigError` naming how to set it."""
        if self.model_dir is None:
            raise ConfigError(
                "no Cube model folder configured: run 'cubesage init' (writes cubesage.toml) or set CUBESAGE_MODEL_DIR"
            )
        return self.model_dir

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
                value = mask_url(secret) if "://" in secret else "********"
            elif isinstance(value, Path | date):
                value = str(value)
            out[name] = value
        return out


def mask_url(url: str) -> str:
    """``url`` with its password (if any) replaced by asterisks."""
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
