"""Named entities of a question resolved to warehouse rows (customers, products, places: rows with a label).

Two sources, merged: SAG row recall (``sag_index.recall.SagRecall.recall_rows``) and an exact-name
directory of the catalog's entity tables (those with a label column), served by an index in PostgreSQL
(``sag_index.entity_names``; names appear verbatim in questions).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg_pool import ConnectionPool

from cubesage_core import db

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
        return {
            "table": self.table,
            "key_column": self.key_column,
            "key_value": self.key_value,
            "label": self.label,
            "entity_type": self.entity_type,
            "source": self.source,
            "score": round(self.score, 4),
        }


NameLookup = Callable[[list[str]], dict[str, EntityMatch]]


class EntityDirectory:
    """Exact (case-insensitive) names of the entity tables' rows; longest match wins.

    Names live in PostgreSQL (``sag_index.entity_names``): a question's word-bounded substrings are looked up
    at once through an index, so nothing is loaded per row at start-up. ``EntityDirectory(names)`` serves a
    small in-memory mapping (tests, tiny catalogs) the same way.
    """

    def __init__(
        self,
        names: dict[str, EntityMatch] | None = None,
        *,
        lookup: NameLookup | None = None,
        longest: int | None = None,
    ) -> None:
        table = names or {}
        self._lookup: NameLookup = lookup or (lambda keys: {k: table[k] for k in keys if k in table})
        self._longest = longest if longest is not None else max(map(len, table), default=0)

    @classmethod
    def load(
        cls, conn: psycopg.Connection, catalog: DetailCatalog, pool: ConnectionPool | None = None
    ) -> EntityDirectory:
        """Refresh the name index of the catalog's entity tables (only those that changed) and look names up
        through ``pool`` (default: a short connection to ``conn``'s server per question)."""
        from sag_index import entity_names

        entity_names.refresh(conn, catalog.entity_tables)
        longest = entity_names.longest(conn)
        url = _url_of(conn)

        def lookup(keys: list[str]) -> dict[str, EntityMatch]:
            def read(c: psycopg.Connection) -> dict[str, EntityMatch]:
                return {
                    surface: EntityMatch(r.table, r.key_column, r.key_value, r.label, r.entity_type, "directory")
                    for surface, r in entity_names.lookup(c, keys).items()
                }

            if pool is not None:
                return db.read(pool, read)
            with db.connection(url) as c:
                return read(c)

        return cls(lookup=lookup, longest=longest)

    def match(self, text: str) -> list[EntityMatch]:
        """Non-overlapping name occurrences in ``text``, longest first (word-bounded for Latin names)."""
        lowered = text.lower()
        spans = [
            (start, end)
            for start in range(len(lowered))
            for end in range(start + 1, min(len(lowered), start + self._longest) + 1)
            if _bounded(lowered, start, end) and lowered[start:end].strip() == lowered[start:end]
        ]
        if not spans:
            return []
        names = self._lookup(list(dict.fromkeys(lowered[s:e] for s, e in spans)))
        occurrences = sorted(
            ((s, e) for s, e in spans if lowered[s:e] in names), key=lambda span: (span[0] - span[1], span[0])
        )
        taken: list[tuple[int, int]] = []
        used: set[str] = set()
        out: list[EntityMatch] = []
        capitalises = _capitalises_names(text)
        for start, end in occurrences:
            surface = lowered[start:end]
            if surface in used or any(s < end and start < e for s, e in taken):
                continue
            if capitalises and _common_word(text[start:end], names[surface].label):
                continue
            used.add(surface)
            taken.append((start, end))
            out.append(names[surface])
        return _dedupe(out)


_MID_CAPITAL = re.compile(r"(?<=[a-z,;:] )[A-Z][a-z]+")


def _capitalises_names(text: str) -> bool:
    """The writer capitalises names: a capitalised word inside a sentence ("... that Jane Peacock ...")."""
    return bool(_MID_CAPITAL.search(text))


def _common_word(said: str, label: str) -> bool:
    """ "phone numbers" beside a track called "Numbers": one word written in lower case where the row's
    name is capitalised, by a writer who capitalises names, is the word, not the name."""
    return " " not in said and said.islower() and not label.islower()


def _only_as_word(text: str, lowered: str, label: str) -> bool:
    """Every occurrence of ``label`` in the question is the common word (``_common_word``)."""
    at = [m.start() for m in re.finditer(re.escape(label.lower()), lowered)]
    return bool(at) and all(_common_word(text[i : i + len(label)], label) for i in at)


def _url_of(conn: psycopg.Connection) -> str:
    """A URL of ``conn``'s server and database (its password included when it used one)."""
    from psycopg.conninfo import make_conninfo

    password = conn.info.password
    return make_conninfo(conn.info.dsn, **({"password": password} if password else {}))


def _bounded(text: str, start: int, end: int) -> bool:
    """Latin names must sit on word boundaries ("Jane Doe" not inside "Jane Doerr")."""
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


def from_row_hits(
    hits: list[Any], text: str, min_score: float = 0.9, tables: Collection[str] | None = None
) -> list[EntityMatch]:
    """SAG ``RowHit``s whose label occurs in the question (or that score above ``min_score``); only rows of
    ``tables`` when given (the planner ignores rows of tables its catalog lacks either way)."""
    out = []
    lowered = text.lower()
    capitalises = _capitalises_names(text)
    for hit in hits:
        table = str(hit.table).rsplit(".", 1)[-1]
        if tables is not None and table not in tables:
            continue
        if str(hit.label).lower() not in lowered and float(hit.score) < min_score:
            continue
        if capitalises and _only_as_word(text, lowered, str(hit.label)):
            continue
        out.append(
            EntityMatch(
                table,
                str(hit.key_column),
                _key(hit.key_value),
                str(hit.label),
                str(hit.entity_type),
                "sag",
                float(hit.score),
            )
        )
    return out


def _key(value: Any) -> Any:
    try:
        return int(value)
    except (TypeError, ValueError):
        return value


def merge(directory: list[EntityMatch], sag: list[EntityMatch]) -> list[EntityMatch]:
    """Directory matches first; SAG hits add rows the directory did not name."""
    return _dedupe([*directory, *sag])
