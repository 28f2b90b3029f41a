"""LLM processor: a DSPy program turns each chunk into one event plus entities.

Parse failures (and transport errors) are retried ``retries`` times; after that the chunk is
processed by the fast processor and the extraction records why (``fallback_reason``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from sag_index.errors import ExtractionError
from sag_index.models import Chunk, Extraction, RawEntity
from sag_index.processor import FastProcessor

log = logging.getLogger(__name__)


class LlmProcessor:
    mode = "llm"

    def __init__(self, lm: Any, retries: int = 2, fallback: FastProcessor | None = None) -> None:
        import dspy

        from sag_index._dspy_programs import ExtractEvent

        self._lm = lm
        self._retries = retries
        self._fallback = fallback or FastProcessor()
        self._program = dspy.Predict(ExtractEvent)

    def process(self, chunks: Sequence[Chunk]) -> list[Extraction]:
        return [self.extract(chunk) for chunk in chunks]

    def extract(self, chunk: Chunk) -> Extraction:
        if chunk.meta.get("entities"):  # structured rows declare their entities: no LLM call needed
            return self._fallback.extract(chunk)
        import dspy

        last: Exception | None = None
        for attempt in range(self._retries + 1):
            try:
                with dspy.context(lm=self._lm):
                    pred = self._program(heading=chunk.heading, chunk=chunk.text)
                return _to_extraction(chunk, pred)
            except Exception as err:
                last = err
                log.warning("LLM extraction of %s failed (attempt %d): %s", chunk.chunk_id, attempt + 1, err)
        fast = self._fallback.extract(chunk)
        fast.fallback_reason = f"{type(last).__name__}: {last}"[:300]
        return fast


def _to_extraction(chunk: Chunk, pred: Any) -> Extraction:
    title = str(getattr(pred, "title", "") or "").strip()
    content = str(getattr(pred, "content", "") or "").strip()
    specs = getattr(pred, "entities", None) or []
    if not title or not content:
        raise ExtractionError("LLM returned an empty event title or content")
    subject = chunk.heading.split(" / ")[0].strip()
    entities = [RawEntity(name=subject, type="topic", role="subject")] if subject else []
    for spec in specs:
        name = (spec.name if hasattr(spec, "name") else str(spec)).strip()
        if name:
            entities.append(
                RawEntity(
                    name=name,
                    type=getattr(spec, "type", "concept") or "concept",
                    description=getattr(spec, "description", "") or content[:240],
                )
            )
    return Extraction(chunk.chunk_id, title, content, entities, mode="llm")
