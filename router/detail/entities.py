"""Named entities of a question resolved to warehouse rows: customers, products, regions.

Two sources, merged: SAG row recall (``sag_index.recall.SagRecall.recall_rows``) and an exact-name
directory of the dimension tables loaded once at startup (names appear verbatim in questions).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg


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


ENTITY_TABLES = {
    "dim_customer": ("customer", "customer_id", "customer_name"),
    "dim_product": ("product", "product_id", "product_name"),
    "dim_region": ("region", "region_id", "name_en"),
}


class EntityDirectory:
    """Exact (case-insensitive) names of customers, products and regions; longest match wins."""

    def __init__(self, names: dict[str, tuple[str, str, Any, str]]) -> None:
        # lower-cased surface form -> (table, name column, key_value, label)
        self._names = names
        self._lengths = sorted({len(name) for name in names}, reverse=True)

    @classmethod
    def load(cls, conn: psycopg.Connection, schema: str = "warehouse") -> EntityDirectory:
        names: dict[str, tuple[str, str, Any, str]] = {}
        for cid, name in conn.execute(f"SELECT customer_id, customer_name FROM {schema}.dim_customer"):
            names[name.lower()] = ("dim_customer", "customer_name", cid, name)
        for pid, name in conn.execute(f"SELECT product_id, product_name FROM {schema}.dim_product"):
            names[name.lower()] = ("dim_product", "product_name", pid, name)
            short = " ".join(name.split()[:2]).lower()  # "Aurora X1" for "Aurora X1 headphones"
            names.setdefault(short, ("dim_product", "product_name", pid, name))
        for rid, code, en, zh in conn.execute(
                f"SELECT region_id, region_code, name_en, name_zh FROM {schema}.dim_region"):
            for surface in (en, zh):
                names[surface.lower()] = ("dim_region", "name_en", rid, en)
            if code != "overseas":
                names.setdefault(zh.lower() + "地区", ("dim_region", "name_en", rid, en))
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
            table, _, key, label = self._names[surface]
            etype, key_column, _ = ENTITY_TABLES[table]
            out.append(EntityMatch(table, key_column, key, label, etype, "directory"))
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


def from_row_hits(hits: list[Any], text: str, min_score: float = 0.9) -> list[EntityMatch]:
    """SAG ``RowHit``s whose label occurs in the question (or that score above ``min_score``)."""
    out = []
    lowered = text.lower()
    for hit in hits:
        table = str(hit.table).rsplit(".", 1)[-1]
        if table not in ENTITY_TABLES:
            continue
        if str(hit.label).lower() not in lowered and float(hit.score) < min_score:
            continue
        etype, key_column, _ = ENTITY_TABLES[table]
        out.append(EntityMatch(table, key_column, _key(hit.key_value), str(hit.label), etype, "sag",
                               float(hit.score)))
    return out


def _key(value: Any) -> Any:
    try:
        return int(value)
    except (TypeError, ValueError):
        return value


def merge(directory: list[EntityMatch], sag: list[EntityMatch]) -> list[EntityMatch]:
    """Directory matches first; SAG hits add rows the directory did not name."""
    return _dedupe([*directory, *sag])
