"""What the passes read besides the reading they build: the warehouse's knowledge and the question."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from router.parse.lexicon import Lexicon
from router.parse.nesting import Nests
from router.parse.reading import Reading, Target
from router.understanding.types import Understanding


@dataclass
class Knowledge:
    """One warehouse: its Cube model, its lexicon and (optionally) a probe that finds which string
    dimensions hold a literal the lexicon does not know ("Clerk#000000286")."""

    model: Any
    lexicon: Lexicon
    probe: Callable[[str], list[Target]] | None = None
    nearest: Callable[[list[str]], list[list[Target]]] | None = None  # Chinese words by meaning
    keyed_labels: frozenset[str] = frozenset()  # names of rows grouped with their key (router.parse.repeated)
    holds: Callable[[str, str], bool] | None = None  # a computed string dimension has this value ("Manager")
    nests: Nests | None = None  # a child label's rows so named all belong to parent rows so named


@dataclass
class Question:
    reading: Reading
    understanding: Understanding
    rows: list[tuple[str, Target]] = field(default_factory=list)  # (label, value target) of recognised rows
