"""The API's door to what the system knows: validate and propose feedback, review proposals, ingest content.

``Knowledge`` is the interface the feedback and ingest controllers use.
``PipelineKnowledge`` implements it with the packages that own each piece:
answer.feedback (validated proposals, their review and engine D's few-shot cache), cube_models (model
validation, the warehouse-schema trust check, model export), fourengine (glossary loader) and sag_index
(wiki indexing). Calls are synchronous (the controllers run them in a worker thread).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from answer import feedback
from answer.api.errors import Unprocessable
from answer.bootstrap import warehouse_map_of
from answer.feedback import ModelValidator, Proposal, Validation
from cube_models.errors import CubeModelsError
from cube_models.export import export_assets
from cube_models.model import load_model, model_files
from cube_models.trust import model_problems
from cube_models.validate import validate
from cubesage_core.embeddings import Embedder, get_embedder
from cubesage_core.settings import Settings
from fourengine.glossary import ingest_text
from sag_index import loaders, wiki
from sag_index.backends import get_store
from sag_index.models import Chunk
from sag_index.pipeline import index_chunks, prune_sources
from sag_index.warehouse import WarehouseMap


@runtime_checkable
class Knowledge(Protocol):
    def validate(self, cube_query: dict[str, Any] | None, sql: str | None) -> Validation: ...
    def validate_cube_query(self, query: dict[str, Any]) -> list[str]: ...
    def propose(
        self,
        *,
        query_id: str,
        question: str,
        verdict: str,
        cube_query: dict[str, Any] | None,
        sql: str | None,
        comment: str | None,
        api_key_id: str | None,
        validation: Validation,
    ) -> Proposal: ...
    def proposals(self, status: str | None, limit: int) -> list[Proposal]: ...
    def approve(self, proposal_id: int, reviewer: str) -> Proposal: ...
    def reject(self, proposal_id: int, reviewer: str) -> Proposal: ...
    def ingest_wiki(self, documents: list[dict[str, str]]) -> dict[str, Any]: ...
    def ingest_cube_models(self, files: list[dict[str, str]]) -> dict[str, Any]: ...
    def ingest_glossary(self, content: str, fmt: str) -> dict[str, Any]: ...


class PipelineKnowledge:
    """Knowledge backed by the real packages and the cubesage database."""

    def __init__(self, settings: Settings, database_url: str) -> None:
        self.settings = settings
        self.url = database_url
        self.validator = ModelValidator(settings, database_url)

    def _embedder(self) -> Embedder:
        return get_embedder(self.settings.embedding_backend)

    # -- feedback ---------------------------------------------------------------------------
    def validate(self, cube_query: dict[str, Any] | None, sql: str | None) -> Validation:
        """Members, compilation and a read-only run of the pair (``answer.feedback.ModelValidator``)."""
        return self.validator.validate(cube_query, sql)

    def validate_cube_query(self, query: dict[str, Any]) -> list[str]:
        """Problems of a stored Cube query against the current model (empty = valid); nothing is run."""
        return [p.message for p in validate(query, load_model(self.settings.model_folder()))]

    def propose(self, **proposal: Any) -> Proposal:
        return feedback.propose(self.url, **proposal)

    def proposals(self, status: str | None, limit: int) -> list[Proposal]:
        return feedback.list_proposals(self.url, status, limit)

    def approve(self, proposal_id: int, reviewer: str) -> Proposal:
        """Validate again, then add to engine D's cache as approved."""
        return feedback.approve(
            self.url, proposal_id, reviewer=reviewer, validator=self.validator, embedder=self._embedder()
        )

    def reject(self, proposal_id: int, reviewer: str) -> Proposal:
        return feedback.reject(self.url, proposal_id, reviewer=reviewer)

    # -- ingest -----------------------------------------------------------------------------
    def ingest_wiki(self, documents: list[dict[str, str]]) -> dict[str, Any]:
        """Chunk each document with sag_index's loader for its format, link pages to their tables, drop the
        sections an edited document no longer has and index the chunks (idempotent: chunk ids are content
        hashes, so a repeat reports every chunk as already indexed)."""
        tables = self._tables()
        chunks: list[Chunk] = []
        for doc in documents:
            source = f"wiki:{doc['name']}"
            front, body = wiki.split_front_matter(doc["content"])
            try:
                page = _chunks_of({**doc, "content": body}, source)
            except loaders.LoaderError as err:
                raise Unprocessable(str(err)) from err
            chunks += (
                page
                if doc["format"] == "json"
                else wiki.link_page(page, front, wiki.page_title(doc["name"], body), body, tables.tables, tables.nouns)
            )
        if not chunks:
            raise Unprocessable("the documents contain no text to index")
        store = get_store(self.settings, self.url)
        try:
            removed = prune_sources(chunks, self.url, store)  # sections an edited page no longer has
            report = index_chunks(chunks, self.url, store, embedder=self._embedder())
        finally:
            store.close()
        return {
            "added": report.chunks_new,
            "unchanged": report.chunks_already_indexed,
            "removed": removed,
            "chunks": report.chunks_total,
            "events_written": report.events_written,
            "backend": report.backend,
            "store_fallback": report.store_fallback,
        }

    def _tables(self) -> WarehouseMap:
        """The model's table names and nouns, for linking pages (no model configured: none)."""
        if self.settings.model_dir is None:
            return WarehouseMap()
        return warehouse_map_of(self.url, self.settings)

    def ingest_cube_models(self, files: list[dict[str, str]]) -> dict[str, Any]:
        """Validate the model folder with these files added/replaced, refuse cubes of these files that read
        outside the warehouse schemas (``cube_models.trust``), export its assets (one transaction,
        idempotent), then write the files into ``settings.model_dir``."""
        target = Path(self.settings.model_folder())
        with tempfile.TemporaryDirectory(prefix="cubesage-models-") as tmp:
            staged = Path(tmp)
            for path in model_files(target) if target.exists() else []:
                shutil.copy2(path, staged / path.name)
            for f in files:
                (staged / f["name"]).write_text(f["content"], encoding="utf-8")
            try:
                model = load_model(staged)
            except CubeModelsError as err:  # named by file name: the staging folder is no one's business
                raise Unprocessable(f"the models do not validate: {str(err).replace(f'{staged}/', '')}") from err
            foreign = model_problems(model, self.settings.warehouse_schemas, [f["name"] for f in files])
            if foreign:
                raise Unprocessable("the models read outside the warehouse schemas: " + "; ".join(foreign[:10]))
            report = export_assets(self.url, model, embedder=self._embedder())
        target.mkdir(parents=True, exist_ok=True)
        written = []
        for f in files:
            path = target / f["name"]
            if path.exists() and path.read_text(encoding="utf-8") == f["content"]:
                continue
            partial = path.with_suffix(path.suffix + ".partial")
            partial.write_text(f["content"], encoding="utf-8")
            os.replace(partial, path)
            written.append(f["name"])
        return {**report.as_counts(), "files_written": written}

    def ingest_glossary(self, content: str, fmt: str) -> dict[str, Any]:
        try:
            return dict(ingest_text(self.url, content, fmt, embedder=self._embedder()))
        except ValueError as err:
            raise Unprocessable(str(err)) from err


def _chunks_of(doc: dict[str, str], source: str) -> list[Chunk]:
    fmt, text = doc["format"], doc["content"]
    if fmt == "markdown":
        return loaders.load_markdown(text, source)
    if fmt == "html":
        return loaders.load_html(text, source)
    if fmt == "json":
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = [json.loads(line) for line in text.splitlines() if line.strip()]
        return loaders.load_json_records(parsed if isinstance(parsed, list) else [parsed], source)
    return loaders.load_text(text, source, title=doc["name"])
