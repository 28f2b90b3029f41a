"""Plain data records exchanged between the SAG pipeline stages, stores and retrieval."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

SourceKind = Literal["doc", "row"]
Role = Literal["subject", "mention"]


@dataclass(frozen=True)
class Chunk:
    """One unit of source text; ``chunk_id`` is a content hash, so re-indexing is idempotent."""

    chunk_id: str
    source: str
    text: str
    heading: str = ""
    position: int = 0
    source_type: str = "markdown"  # markdown | text | html | json | row
    kind: SourceKind = "doc"
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class RawEntity:
    """An entity as a processor proposes it (before normalisation and ids)."""

    name: str
    type: str = "concept"
    description: str = ""
    role: Role = "mention"
    embed: bool = True


@dataclass
class Extraction:
    """Processor output for one chunk: exactly one event plus its entities."""

    chunk_id: str
    title: str
    content: str
    entities: list[RawEntity]
    mode: str = "fast"  # fast | llm
    fallback_reason: str | None = None


@dataclass(frozen=True)
class EntityRecord:
    entity_id: str
    name: str
    type: str
    normalized: str
    embed: bool = True


@dataclass(frozen=True)
class EventEntityRecord:
    event_id: str
    entity_id: str
    role: Role
    description: str


@dataclass
class EventRecord:
    """A parsed event ready to save: one per chunk, with its entity links."""

    event_id: str
    chunk: Chunk
    title: str
    content: str
    mode: str
    entities: list[EntityRecord]
    links: list[EventEntityRecord]

    @property
    def tokens_text(self) -> str:
        """The text BM25 ranks: title plus the full chunk text."""
        return f"{self.title}\n{self.chunk.text}"


@dataclass(frozen=True)
class Hit:
    """One scored id returned by a vector or BM25 search."""

    id: str
    score: float
