"""The API's door to what the system knows: validate corrections, learn approved pairs, ingest content.

``Knowledge`` is the interface the feedback and ingest controllers use.
``PipelineKnowledge`` implements it with the packages that own each piece:
cube_models (query validation, model export), router.sqlguard (SQL guard),
fourengine (engine D's few-shot cache, glossary loader) and sag_index (wiki indexing).
Calls are synchronous (the controllers run them in a worker thread).
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol, runtime_checkable

from answer.api.errors import ServiceUnavailable, Unprocessable
from cubesage_core.settings import Settings


@runtime_checkable
class Knowledge(Protocol):
    def validate_cube_query(self, query: dict[str, Any]) -> list[str]: ...
    def validate_sql(self, sql: str) -> list[str]: ...
    def learn(self, question: str, cube_query: dict[str, Any] | None, sql: str | None) -> int: ...
    def ingest_wiki(self, documents: list[dict[str, str]]) -> dict[str, Any]: ...
    def ingest_cube_models(self, files: list[dict[str, str]]) -> dict[str, Any]: ...
    def ingest_glossary(self, content: str, fmt: str) -> dict[str, Any]: ...


def _import(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise ServiceUnavailable(f"{module} is not available in this installation: {err}") from err


class PipelineKnowledge:
    """Knowledge backed by the real packages and the cubesage database."""

    def __init__(self, settings: Settings, database_url: str) -> None:
        self.settings = settings
        self.url = database_url
        self._model = None

    # -- validation -------------------------------------------------------------------------
    def _semantic_model(self) -> Any:
        if self._model is None:
            self._model = _import("cube_models.model").load_model(self.settings.model_dir)
        return self._model

    def validate_cube_query(self, query: dict[str, Any]) -> list[str]:
        validation = _import("cube_models.validation")
        problems = validation.validate(query, self._semantic_model())
        return [str(getattr(p, "message", p)) for p in problems]

    def validate_sql(self, sql: str) -> list[str]:
        sqlguard = _import("router.sqlguard")
        try:
            sqlguard.guard_sql(sql, self._guard_policy(sqlguard))
        except sqlguard.SqlGuardError as err:
            return [str(err)]
        return []

    def _guard_policy(self, sqlguard: Any) -> Any:
        from cubesage_core import db

        schema = self.settings.warehouse_schema
        with db.connection(self.url) as conn:
            rows = conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (schema,)
            ).fetchall()
        return sqlguard.GuardPolicy(
            allowed_tables=frozenset(f"{schema}.{name}".lower() for (name,) in rows),
            max_limit=self.settings.query_row_cap, default_schema=schema)

    # -- learning ---------------------------------------------------------------------------
    def learn(self, question: str, cube_query: dict[str, Any] | None, sql: str | None) -> int:
        """Put an approved question -> (Cube query | SQL) pair into engine D's few-shot cache."""
        fewshot = _import("fourengine.engines.fewshot")
        return int(fewshot.add_example_sync(self.url, question, cube_query=cube_query, sql=sql, approved=True))

    # -- ingest -----------------------------------------------------------------------------
    def ingest_wiki(self, documents: list[dict[str, str]]) -> dict[str, Any]:
        ingest = _import("sag_index.ingest")
        return dict(ingest.ingest_documents(self.url, documents, settings=self.settings))

    def ingest_cube_models(self, files: list[dict[str, str]]) -> dict[str, Any]:
        export = _import("cube_models.export")
        return dict(export.ingest_files(self.url, files, settings=self.settings))

    def ingest_glossary(self, content: str, fmt: str) -> dict[str, Any]:
        glossary = _import("fourengine.glossary")
        try:
            return dict(glossary.ingest_text(self.url, content, fmt))
        except ValueError as err:
            raise Unprocessable(str(err)) from err
