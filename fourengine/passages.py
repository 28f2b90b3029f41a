"""Wiki passages for corrective retrieval: a boundary to whatever indexes the table wikis (SAG does).

fourengine does not import the SAG index (dependencies point one way); the router hands the retriever a
:class:`PassageSource`. A passage names the physical tables it describes; :func:`table_assets` maps them
to the table assets of the semantic layer (by ``meta.sql_table``, else by name).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from fourengine.models import Asset

MIN_SHARED_CHARS = 3


@dataclass(frozen=True)
class Passage:
    """One wiki section about a table, as the passage source ranked it."""

    table: str  # physical table, qualified or not ("billing.credit_notes")
    score: float
    title: str = ""
    ref: str = ""  # the source's id of the section (an event id)
    text: str = ""  # the section's text (what the question's words are checked against)

    def shares_words(self, terms: list[str]) -> bool:
        """Whether the passage contains one of the question's search terms (three or more letters, two or more
        Chinese characters): vector similarity alone ranks some section first for any question, so only a
        shared word is evidence."""
        body = f"{self.title} {self.text}".lower()
        return any(len(t) >= (MIN_SHARED_CHARS - (not t.isascii())) and t.lower() in body for t in terms)


class PassageSource(Protocol):
    def passages(self, question: str, limit: int) -> list[Passage]:
        """The best wiki passages for ``question`` (at most ``limit``), best first."""
        ...


def table_assets(passages: list[Passage], tables: dict[str, Asset]) -> list[tuple[Passage, Asset]]:
    """Each passage with the table asset it describes (passages of unknown tables are dropped)."""
    by_name: dict[str, Asset] = {}
    for asset in tables.values():
        physical = str(asset.meta.get("sql_table") or "").lower()
        for key in (physical, physical.rpartition(".")[2], asset.name.lower()):
            if key:
                by_name.setdefault(key, asset)
    out = []
    for passage in passages:
        name = passage.table.lower()
        match = by_name.get(name) or by_name.get(name.rpartition(".")[2])
        if match is not None:
            out.append((passage, match))
    return out
