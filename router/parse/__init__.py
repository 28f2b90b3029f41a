"""The fast parser: a question read against one warehouse's model, every word accounted for.

``parse(understanding, knowledge, rows)`` runs the passes of ``router.parse.passes`` over the question
and returns a :class:`Reading`: the measures, group-bys, filters, segments, order and limit of an
aggregate, or the cube, columns, filters, order and limit of a listing, plus the words nothing in the
model or the language explains (``unknown``) and, when the model cannot express what was asked, a
``refusal`` saying what is missing. ``router.parse.cube`` turns a reading into Cube queries.

Everything the parser knows about a business comes from the model, the glossary and the warehouse's
values (``router.parse.lexicon``); its own word lists are language only (``router.parse.language``).
"""

from __future__ import annotations

from collections.abc import Sequence

from router.parse.context import Knowledge, Question
from router.parse.lexicon import Lexicon, build_lexicon
from router.parse.passes import PASSES
from router.parse.reading import Filter, Mark, Mention, Reading, Target
from router.understanding.types import Understanding

__all__ = ["Filter", "Knowledge", "Lexicon", "Mark", "Mention", "Reading", "Target", "build_lexicon", "parse"]


def parse(understanding: Understanding, knowledge: Knowledge, rows: Sequence[tuple[str, Target]] = ()) -> Reading:
    reading = Reading(understanding.normalized, understanding.language, understanding.today)
    question = Question(reading, understanding, list(rows))
    for _, step in PASSES:
        step(question, knowledge)
    return reading
