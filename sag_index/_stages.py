"""Pipeline stages after the processor: filter (drop noise) and parser (normalise, assign ids)."""

from __future__ import annotations

from sag_index._text import STOPWORDS, normalize_name, stable_id
from sag_index.models import Chunk, EntityRecord, EventEntityRecord, EventRecord, Extraction, RawEntity
from sag_index.processor import MAX_ENTITIES, condense, event_title


def event_id_for(chunk_id: str) -> str:
    return f"ev_{chunk_id}"


def entity_id_for(normalized: str) -> str:
    return f"en_{stable_id(normalized, size=12)}"


def filter_extraction(extraction: Extraction, chunk: Chunk) -> Extraction:
    """Repair empty events from the chunk itself; drop empty, stop-word and oversized entities."""
    title = extraction.title.strip() or event_title(chunk)
    content = extraction.content.strip() or condense(chunk.text)
    kept: list[RawEntity] = []
    for entity in extraction.entities:
        key = normalize_name(entity.name)
        if not key or key in STOPWORDS or len(entity.name) > 120 or (len(key) < 2 and not key.isdigit()):
            continue
        kept.append(entity)
    extraction.title, extraction.content, extraction.entities = title[:300], content, kept[:MAX_ENTITIES]
    return extraction


def parse_extraction(extraction: Extraction, chunk: Chunk) -> EventRecord:
    """Typed records with stable ids: one event per chunk, entities deduplicated by normalized name."""
    event_id = event_id_for(chunk.chunk_id)
    entities: dict[str, EntityRecord] = {}
    links: dict[str, EventEntityRecord] = {}
    for raw in extraction.entities:
        normalized = normalize_name(raw.name)
        entity_id = entity_id_for(normalized)
        if entity_id not in entities:
            entities[entity_id] = EntityRecord(
                entity_id, raw.name.strip(), raw.type or "concept", normalized, raw.embed
            )
        previous = links.get(entity_id)
        if previous is None or (raw.role == "subject" and previous.role != "subject"):
            links[entity_id] = EventEntityRecord(
                event_id, entity_id, raw.role, (raw.description or extraction.title)[:500]
            )
    return EventRecord(
        event_id,
        chunk,
        extraction.title,
        extraction.content,
        extraction.mode,
        list(entities.values()),
        list(links.values()),
    )
