"""DSPy programs (prompts as data) for the LLM mode: event extraction, query NER, event selection."""

from __future__ import annotations

import dspy
from pydantic import BaseModel, Field


class EntitySpec(BaseModel):
    name: str = Field(description="entity name as written in the text")
    type: str = Field(default="concept", description="person, organization, place, work, item, table, ...")
    description: str = Field(default="", description="how the entity takes part in the event, one sentence")


class ExtractEvent(dspy.Signature):
    """Fuse the chunk into exactly ONE self-contained event (title + content) and list the entities
    (people, organisations, places, works, things, tables, columns, terms) that take part in it."""

    heading: str = dspy.InputField(desc="section heading of the chunk, may be empty")
    chunk: str = dspy.InputField(desc="source text")
    title: str = dspy.OutputField(desc="short event title")
    content: str = dspy.OutputField(desc="self-contained summary of the whole chunk, at most 3 sentences")
    entities: list[EntitySpec] = dspy.OutputField(desc="entities of the event, most important first")


class ExtractQueryEntities(dspy.Signature):
    """List the named entities (names, titles, places, table or column names) in the question."""

    question: str = dspy.InputField()
    entities: list[str] = dspy.OutputField(desc="entity names exactly as written in the question")


class SelectEvents(dspy.Signature):
    """Pick the events needed to answer the question, including bridge events that a reasoning chain
    ("first find X, then find Y") passes through even when they do not resemble the question."""

    question: str = dspy.InputField()
    candidates: list[str] = dspy.InputField(desc="numbered candidate events: '[i] title: content'")
    top_k: int = dspy.InputField()
    selected: list[int] = dspy.OutputField(desc="indices of the chosen candidates, most useful first")
