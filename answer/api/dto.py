"""Request and response bodies of the HTTP API (msgspec Structs: typed, validated, in the OpenAPI schema)."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal
from uuid import UUID

import msgspec
from msgspec import Meta, Struct

NonEmpty = Annotated[str, Meta(min_length=1)]
SessionId = Annotated[str, Meta(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.:-]+$")]
Mode = Literal["fast", "llm"]


class AskRequest(Struct, forbid_unknown_fields=True):
    """A natural-language question; ``session_id`` links follow-ups to the previous turn."""

    question: NonEmpty
    session_id: SessionId | None = None
    mode: Mode | None = None
    today: date | None = None


class Table(Struct):
    """Raw ``columns``/``rows`` (numbers as numbers, times as ISO strings) and how to show them."""

    columns: list[Any] = msgspec.field(default_factory=list)
    rows: list[Any] = msgspec.field(default_factory=list)
    labels: list[str] = msgspec.field(default_factory=list)  # column titles from the model, parallel to columns
    formats: list[str | None] = msgspec.field(default_factory=list)  # "percent" | "currency" | "id" | None
    kinds: list[str] = msgspec.field(default_factory=list)  # "time" | "number" | "text" per column
    grains: list[str | None] = msgspec.field(default_factory=list)  # granularity of time columns
    display: list[list[str]] = msgspec.field(default_factory=list)  # every cell as shown (2024-01, 6.64%)
    row_count: int = 0
    truncated: bool = False  # the query stopped at a row limit the question did not ask for
    total_rows: int | None = None  # when truncated: the rows there are (provenance.truncation has every cut)


class AskResponse(Struct):
    """The synthesizer's answer: text, the table behind it, a Vega-Lite spec and provenance."""

    query_id: str
    question: str
    intent: str | None
    text: str
    table: Table
    chart: dict[str, Any] | None
    provenance: dict[str, Any]
    timings_ms: dict[str, Any]
    session_id: str | None = None


class NL2CubeRequest(Struct, forbid_unknown_fields=True):
    question: NonEmpty
    run: bool = False
    today: date | None = None


class LabeledQuery(Struct, forbid_unknown_fields=True):
    """One of the Cube queries of a question: a compared period ("2023") or a group of measures of one cube."""

    label: str
    cube_query: dict[str, Any]


class NL2CubeResponse(Struct):
    """A Cube query for a dashboard; ``rows`` only when ``run`` was requested; ``cube_queries`` when the
    question needs several (compared periods, measures of different cubes), in the order they are combined."""

    cube_query: dict[str, Any]
    bindings: list[Any]
    confidence: float
    rows: list[Any] | None = None
    sql: str | None = None
    cube_queries: list[LabeledQuery] | None = None


class CubeLoadRequest(Struct, forbid_unknown_fields=True):
    """A stored Cube query (a dashboard tile) to run again, or the ``cube_queries`` nl2cube returned."""

    cube_query: dict[str, Any] | None = None
    cube_queries: Annotated[list[LabeledQuery], Meta(min_length=1, max_length=20)] | None = None
    today: date | None = None
    language: Literal["en", "zh"] = "en"
    title: Annotated[str, Meta(max_length=1000)] = ""


class CubeLoadResponse(Struct):
    """The rows of a stored query as an answer shows them: table and chart, the SQL and backend that ran."""

    table: Table
    chart: dict[str, Any] | None
    sql: list[str]
    backend: str
    today: str
    fallback_reason: str | None = None


class SuggestionsResponse(Struct):
    """Questions built from the model, the day relative dates resolve against, the months the data covers."""

    questions: list[str]
    today: str
    period: list[str] | None = None


class FeedbackRequest(Struct, forbid_unknown_fields=True):
    """A verdict on an answer; a correction (Cube query or SQL), or the answer's own query on a thumbs up, is
    validated and stored as a proposal that an admin must approve before engine D uses it."""

    query_id: UUID
    verdict: Literal["up", "down"]
    corrected_cube_query: dict[str, Any] | None = None
    corrected_sql: Annotated[str, Meta(min_length=1, max_length=20_000)] | None = None
    comment: Annotated[str, Meta(max_length=2_000)] | None = None


class FeedbackResponse(Struct):
    """``learned`` is true only once an approved pair is in engine D's cache: never on submission."""

    query_id: str
    verdict: str
    learned: bool
    status: Literal["recorded", "pending"] = "recorded"
    proposal_id: int | None = None
    cache_id: int | None = None
    message: str = ""


class ProposalBody(Struct):
    """A feedback proposal: what was proposed, how it validated, and its review."""

    proposal_id: int
    query_id: str
    question: str
    verdict: str
    status: Literal["pending", "approved", "rejected"]
    cube_query: dict[str, Any] | None
    sql: str | None
    comment: str | None
    validation: dict[str, Any]
    created_at: str
    reviewed_at: str | None = None
    reviewed_by: str | None = None
    cache_id: int | None = None


class ProposalList(Struct):
    proposals: list[ProposalBody]


class WikiDocument(Struct, forbid_unknown_fields=True):
    name: Annotated[str, Meta(min_length=1, max_length=300)]
    content: str
    format: Literal["markdown", "html", "text", "json"] = "markdown"


class IngestWikiRequest(Struct, forbid_unknown_fields=True):
    documents: Annotated[list[WikiDocument], Meta(min_length=1, max_length=1_000)]


class ModelFile(Struct, forbid_unknown_fields=True):
    name: Annotated[str, Meta(min_length=1, max_length=300, pattern=r"^[A-Za-z0-9_.-]+\.ya?ml$")]
    content: str


class IngestCubeModelsRequest(Struct, forbid_unknown_fields=True):
    files: Annotated[list[ModelFile], Meta(min_length=1, max_length=500)]


class IngestGlossaryRequest(Struct, forbid_unknown_fields=True):
    content: Annotated[str, Meta(min_length=1)]
    format: Literal["csv", "yaml"] = "yaml"


class IngestResponse(Struct):
    """What an ingest changed (idempotent: a repeat reports everything unchanged)."""

    kind: str
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    details: dict[str, Any] = msgspec.field(default_factory=dict)


class CatalogMember(Struct):
    name: str
    title: str
    description: str
    cube: str | None = None
    type: str | None = None
    format: str | None = None


class CatalogTerm(Struct):
    term: str
    synonyms: list[str]
    language: str
    definition: str
    maps_to: str | None = None


class CatalogCube(Struct):
    name: str
    title: str
    description: str


class CatalogResponse(Struct):
    metrics: list[CatalogMember]
    dimensions: list[CatalogMember]
    terms: list[CatalogTerm]
    cubes: list[CatalogCube] = msgspec.field(default_factory=list)


class QueryRecord(Struct):
    """One audited question: what was asked, how it was answered, which SQL ran, the feedback."""

    query_id: str
    created_at: str
    question: str
    session_id: str | None
    intent: str | None
    plan: dict[str, Any]
    timings: dict[str, Any]
    executed_sql: str | None
    answer: dict[str, Any]
    feedback: dict[str, Any] | None


class Health(Struct):
    status: str


class Readiness(Struct):
    status: Literal["ready", "degraded", "unavailable"]
    checks: dict[str, dict[str, Any]]


class ErrorBody(Struct):
    """Every 4xx/5xx body: a stable code and a human message, never internals."""

    status_code: int
    error: str
    detail: str
