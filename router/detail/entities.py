"""Named entities of a question resolved to warehouse rows (customers, products, regions in the demo).

Two sources, merged: SAG row recall (``sag_index.recall.SagRecall.recall_rows``) and an exact-name
directory of the catalog's entity tables (those with a label column) loaded once at startup (names
appear verbatim in questions).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import psycopg
import sqlglot

if TYPE_CHECKING:
    from router.detail.schema import DetailCatalog


@dataclass(frozen=True)
class EntityMatch:
    """A question span bound to one row: ``table.key_column = key_value``."""

    table: str
    key_column: str
    key_value: Any
    label: str
    entity_type: str  # customer | product | region
    source: str  # directory | sag
    score: float = 1.0

    def to_dict(self) -> dict[str, Any]:
        return {"table": self.table, "key_column": self.key_column, "key_value": self.key_value,
                "label": self.label, "entity_type": self.entity_type, "source": self.source,
                "score": round(self.score, 4)}


class EntityDirectory:
    """Exact (case-insensitive) names of the entity tables' rows; longest match wins."""

    def __init__(self, names: dict[str, EntityMatch]) -> None:
        # lower-cased surface form -> the row it names
        self._names = names
        self._lengths = sorted({len(name) for name in names}, reverse=True)

    @classmethod
    def load(cls, conn: psycopg.Connection, catalog: DetailCatalog) -> EntityDirectory:
        """Every row name of every entity table: label, other name columns, word prefixes, suffixed forms."""
        names: dict[str, EntityMatch] = {}
        for spec in catalog.entity_tables:
            columns = list(dict.fromkeys([spec.key, str(spec.label), *spec.name_columns]))
            query = sqlglot.select(*columns).from_(sqlglot.exp.table_(spec.table, db=spec.schema))
            for row in conn.execute(query.sql(dialect="postgres")):
                values = dict(zip(columns, row, strict=True))
                label = values[str(spec.label)]
                if label is None:
                    continue
                match = EntityMatch(spec.table, spec.key, values[spec.key], str(label), spec.entity_type, "directory")
                for column in (str(spec.label), *spec.name_columns):
                    if values[column] is not None:
                        names[str(values[column]).lower()] = match
                if spec.prefix_words:
                    names.setdefault(" ".join(str(label).split()[:spec.prefix_words]).lower(), match)
                for column, suffix in spec.suffixes:
                    if values.get(column) is not None:
                        names.setdefault(f"{values[column]}{suffix}".lower(), match)
        return cls(names)

    def __len__(self) -> int:
        return len(self._names)

    def match(self, text: str) -> list[EntityMatch]:
        """Non-overlapping name occurrences in ``text``, longest first (word-bounded for Latin names)."""
        lowered = text.lower()
        occurrences = sorted(
            ((start, start + n) for n in self._lengths for start in range(len(lowered) - n + 1)
             if lowered[start:start + n] in self._names),
            key=lambda span: (span[0] - span[1], span[0]),
        )
        taken: list[tuple[int, int]] = []
        used: set[str] = set()
        out: list[EntityMatch] = []
        for start, end in occurrences:
            surface = lowered[start:end]
            if surface in used or not _bounded(lowered, start, end) or any(s < end and start < e for s, e in taken):
                continue
            used.add(surface)
            taken.append((start, end))
            out.append(self._names[surface])
        return _dedupe(out)


def _bounded(text: str, start: int, end: int) -> bool:
    """Latin names must sit on word boundaries ("Li Wei" not inside "Eli Weiss")."""
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    first, last = text[start], text[end - 1]
    ok_before = not (first.isascii() and first.isalnum() and before.isascii() and before.isalnum())
    ok_after = not (last.isascii() and last.isalnum() and after.isascii() and after.isalnum())
    return ok_before and ok_after


def _dedupe(matches: list[EntityMatch]) -> list[EntityMatch]:
    seen: set[tuple[str, Any]] = set()
    out = []
    for m in matches:
        if (m.table, m.key_value) not in seen:
            seen.add((m.table, m.key_value))
            out.append(m)
    return out


def from_row_hits(hits: list[Any], text: str, min_score: float = 0.9,
                  tables: Collection[str] | None = None) -> list[EntityMatch]:
    """SAG ``RowHit``s whose label occurs in the question (or that score above ``min_score``); only rows of
    ``tables`` when given (the planner ignores rows of tables its catalog lacks either way)."""
    out = []
    lowered = text.lower()
    for hit in hits:
        table = str(hit.table).rsplit(".", 1)[-1]
        if tables is not None and table not in tables:
            continue
        if str(hit.label).lower() not in lowered and float(hit.score) < min_score:
            continue
        out.append(EntityMatch(table, str(hit.key_column), _key(hit.key_value), str(hit.label),
                               str(hit.entity_type), "sag", float(hit.score)))
    return out


def _key(value: Any) -> Any:
    try:
        return int(value)
    except (TypeError, ValueError):
        return value


def merge(directory: list[EntityMatch], sag: list[EntityMatch]) -> list[EntityMatch]:
    """Directory matches first; SAG hits add rows the directory did not name."""
    return _dedupe([*directory, *sag])
