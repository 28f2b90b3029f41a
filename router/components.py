"""The pipeline's moving parts as typed ports: what ``router.pipeline.Pipeline`` calls, and nothing else.

``answer.wiring.load_components`` builds the real ones (query understanding, decomposition, intent and the
aggregate path from ``router``; retrieval from ``fourengine``; table/row recall from ``sag_index``; the Cube
model and backends from ``cube_models``). Tests pass small fakes with the same call shapes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from cube_models.backends.base import LoadResult
    from cube_models.model import SemanticModel
    from router.aggregate.follow_up import FollowUp
    from router.aggregate.types import AggregateResult
    from router.aggregate.values import ValueIndex
    from router.decompose import SubQuery
    from router.detail.entities import EntityMatch
    from router.intent.types import IntentDecision, IntentSignals
    from router.parse.reading import Reading
    from router.understanding.types import Understanding
    from sag_index.recall import RowHit, TableHit

# a question's retrieval: "result" (fourengine.models.RetrievalResult of the question), "by_sub" (of each
# sub-query), "context" (their fusion), "entities" (rows the question names, added by the pipeline)
Retrieval = dict[str, Any]


class Understand(Protocol):
    def __call__(self, question: str, today: date, *, use_llm: bool | None = None) -> Understanding: ...


class Decompose(Protocol):
    def __call__(self, understanding: Understanding, *, use_llm: bool | None = None) -> list[SubQuery]: ...


class Retrieve(Protocol):
    def __call__(
        self, understanding: Understanding, sub_queries: list[SubQuery]
    ) -> tuple[Retrieval, list[dict[str, Any]]]: ...


class RecallTables(Protocol):
    def __call__(self, question: str, top_k: int = 5, rows: list[RowHit] | None = None) -> list[TableHit]: ...


class RecallRows(Protocol):
    def __call__(self, question: str, top_k: int = 10) -> list[RowHit]: ...


class Signals(Protocol):
    def __call__(
        self, understanding: Understanding, retrieval: Retrieval, entities: list[EntityMatch], tables: list[TableHit]
    ) -> IntentSignals: ...


class ClassifyIntent(Protocol):
    def __call__(
        self, understanding: Understanding, signals: IntentSignals | None = None, *, use_llm: bool | None = None
    ) -> IntentDecision: ...


class Aggregate(Protocol):
    def __call__(
        self,
        understanding: Understanding,
        retrieval: Retrieval,
        today: date,
        use_llm: bool | None,
        follow_up: FollowUp | None = None,
    ) -> AggregateResult: ...


class Drill(Protocol):
    """(cube_query, rows, named cubes, limit, shown, today) -> (drill-down query, its rows) | None."""

    def __call__(
        self,
        cube_query: dict[str, Any],
        rows: list[dict[str, Any]],
        named: list[str],
        limit: int,
        shown: int,
        today: date,
    ) -> tuple[dict[str, Any], LoadResult] | None: ...


class Parse(Protocol):
    """(understanding, entity rows) -> the parser's reading, or None when the warehouse has no parser."""

    def __call__(self, understanding: Understanding, entities: list[EntityMatch]) -> Reading | None: ...


class Spell(Protocol):
    """question -> (the question with its typos read as the words meant, the (written, read) pairs)."""

    def __call__(self, question: str) -> tuple[str, list[tuple[str, str]]]: ...


class Listing(Protocol):
    """(listing reading, understanding, today, row limit) -> (dimensions-only Cube query, its rows)."""

    def __call__(
        self, reading: Reading, understanding: Understanding, today: date, limit: int
    ) -> tuple[dict[str, Any], LoadResult]: ...


class Load(Protocol):
    """A stored Cube query run again on the current backend, without a question."""

    def __call__(self, cube_query: dict[str, Any], today: date) -> LoadResult | None: ...


class Close(Protocol):
    def __call__(self) -> None: ...


class Refresh(Protocol):
    """After an ingest: ``kind`` is "wiki", "cube-models" or "glossary"."""

    def __call__(self, kind: str) -> None: ...


class CurrentValues(Protocol):
    """The current model's dimension values (None: not loaded)."""

    def __call__(self) -> ValueIndex | None: ...


class CurrentModel(Protocol):
    """The current Cube model (None: not loaded)."""

    def __call__(self) -> SemanticModel | None: ...


# defaults of the optional ports: a pipeline without them answers without drill-downs, listings or reloads
def _close() -> None:
    return None


def _refresh(kind: str) -> None:
    return None


def _current() -> None:
    return None


def _drill(
    cube_query: dict[str, Any], rows: list[dict[str, Any]], named: list[str], limit: int, shown: int, today: date
) -> None:
    return None


def _parse(understanding: Understanding, entities: list[EntityMatch]) -> None:
    return None


def _listing(
    reading: Reading, understanding: Understanding, today: date, limit: int
) -> tuple[dict[str, Any], LoadResult]:
    raise NotImplementedError("these components have no listing path (and no parser to ask for one)")


def _load(cube_query: dict[str, Any], today: date) -> None:
    return None


def _spell(question: str) -> tuple[str, list[tuple[str, str]]]:
    return question, []


@dataclass
class Components:
    understand: Understand
    decompose: Decompose
    retrieve: Retrieve
    recall_tables: RecallTables  # (question, rows=row hits already recalled)
    recall_rows: RecallRows
    signals: Signals
    classify_intent: ClassifyIntent
    aggregate: Aggregate
    close: Close = _close
    refresh: Refresh = _refresh
    value_index: CurrentValues = _current
    drill: Drill = _drill
    parse: Parse = _parse
    spell: Spell = _spell
    listing: Listing = _listing
    load: Load = _load
    model: CurrentModel = _current
