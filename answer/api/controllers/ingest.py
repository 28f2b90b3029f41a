"""POST /v1/ingest/{wiki,cube-models,glossary}: validated, transactional, idempotent content updates.

Ingest is a trust boundary: every route needs a key with the ``ingest`` scope (even in keyless loopback
mode, unless ``api_ingest_requires_key`` is false). Each endpoint parses its input first (bad or oversized
YAML, CSV, JSON -> 422 naming the document; YAML within :mod:`cubesage_core.safe_yaml`'s limits), then
hands it to the package that owns it and returns what changed.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any, ClassVar

import anyio.to_thread
from litestar import Controller, post

from answer.api._service import ServiceAdapter
from answer.api.cache import AnswerCache
from answer.api.dto import (
    IngestCubeModelsRequest,
    IngestGlossaryRequest,
    IngestResponse,
    IngestWikiRequest,
)
from answer.api.errors import Unprocessable, error_responses
from answer.api.knowledge import Knowledge
from cubesage_core import safe_yaml


async def _changed(kind: str, service: ServiceAdapter, answer_cache: AnswerCache) -> None:
    """New knowledge is used at once: the running service reloads what depends on it, cached answers go."""
    await service.knowledge_changed(kind)
    answer_cache.clear()


def _counts(kind: str, result: dict[str, Any]) -> IngestResponse:
    known = ("added", "updated", "unchanged", "removed")
    return IngestResponse(
        kind=kind,
        **{k: int(result.get(k) or 0) for k in known},
        details={k: v for k, v in result.items() if k not in known},
    )


def _check_wiki(data: IngestWikiRequest) -> list[dict[str, str]]:
    names = [d.name for d in data.documents]
    if len(set(names)) != len(names):
        raise Unprocessable("document names must be unique within one request")
    for doc in data.documents:
        if not doc.content.strip():
            raise Unprocessable(f"document {doc.name!r} is empty")
        if doc.format == "json":
            try:
                json.loads(doc.content)
            except ValueError:
                try:
                    [json.loads(line) for line in doc.content.splitlines() if line.strip()]
                except ValueError as err:
                    raise Unprocessable(f"document {doc.name!r} is neither JSON nor JSON lines: {err}") from err
    return [{"name": d.name, "content": d.content, "format": d.format} for d in data.documents]


def _check_models(data: IngestCubeModelsRequest) -> list[dict[str, str]]:
    for f in data.files:
        try:
            parsed = safe_yaml.load(f.content)
        except safe_yaml.YamlLimitError as err:
            raise Unprocessable(f"{f.name}: {err}") from err
        if not isinstance(parsed, dict) or not ({"cubes", "views"} & parsed.keys()):
            raise Unprocessable(f"{f.name}: a Cube model file needs a top-level 'cubes:' or 'views:' list")
    return [{"name": f.name, "content": f.content} for f in data.files]


def _check_glossary(data: IngestGlossaryRequest) -> None:
    if data.format == "yaml":
        try:
            parsed = safe_yaml.load(data.content)
        except safe_yaml.YamlLimitError as err:
            raise Unprocessable(f"glossary: {err}") from err
        if not isinstance(parsed, dict | list):
            raise Unprocessable("glossary: YAML must be a list of terms or a mapping with 'terms:'")
    else:
        try:
            rows = list(csv.DictReader(io.StringIO(data.content)))
        except csv.Error as err:
            raise Unprocessable(f"glossary: not valid CSV: {err}") from err
        if not rows:
            raise Unprocessable("glossary: the CSV has a header but no rows")


class IngestController(Controller):
    path = "/v1/ingest"
    tags = ("ingest",)
    # Litestar's Controller annotates opt as an instance attribute and reads (and deep-copies) this class value
    opt: ClassVar[dict[str, Any]] = {"scope": "ingest"}  # type: ignore[misc]

    @post(
        "/wiki",
        summary="Index wiki pages (markdown, html, text, json) into SAG",
        status_code=200,
        responses=error_responses(400, 401, 403, 413, 415, 422, 429, 503),
    )
    async def wiki(
        self, data: IngestWikiRequest, knowledge: Knowledge, answer_cache: AnswerCache, service: ServiceAdapter
    ) -> IngestResponse:
        documents = _check_wiki(data)
        result = await anyio.to_thread.run_sync(knowledge.ingest_wiki, documents)
        await _changed("wiki", service, answer_cache)
        return _counts("wiki", result)

    @post(
        "/cube-models",
        summary="Validate and export Cube YAML models to the semantic assets",
        status_code=200,
        responses=error_responses(400, 401, 403, 413, 415, 422, 429, 503),
    )
    async def cube_models(
        self, data: IngestCubeModelsRequest, knowledge: Knowledge, answer_cache: AnswerCache, service: ServiceAdapter
    ) -> IngestResponse:
        files = _check_models(data)
        result = await anyio.to_thread.run_sync(knowledge.ingest_cube_models, files)
        await _changed("cube-models", service, answer_cache)
        return _counts("cube-models", result)

    @post(
        "/glossary",
        summary="Load business terms (CSV or YAML)",
        status_code=200,
        responses=error_responses(400, 401, 403, 413, 415, 422, 429, 503),
    )
    async def glossary(
        self, data: IngestGlossaryRequest, knowledge: Knowledge, answer_cache: AnswerCache, service: ServiceAdapter
    ) -> IngestResponse:
        _check_glossary(data)
        result = await anyio.to_thread.run_sync(knowledge.ingest_glossary, data.content, data.format)
        await _changed("glossary", service, answer_cache)
        return _counts("glossary", result)
