"""Values of the model's low-cardinality string dimensions named in a question ("the Pulse brand",
"customers in 杭州") as filters of an aggregate query.

Built once from the warehouse: every public string dimension over a plain column of a cube's table with
at most ``MAX_VALUES`` distinct values. A bilingual value ("杭州 Hangzhou") is also found by each of its
words. Latin values match whole words only; values shorter than two characters, numbers and a few
words that are ordinary English ("other", "none") are not matched. Members the glossary already binds
to a value keep the glossary's meaning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from psycopg import sql as pgsql

MAX_VALUES = 100
IGNORED = frozenset({"other", "others", "none", "null", "unknown", "yes", "no", "true", "false", "n/a", "all"})
_CJK = re.compile(r"[\u3400-\u9fff]")


@dataclass
class ValueIndex:
    """Lower-cased surface form -> [(member, value)]."""

    surfaces: dict[str, list[tuple[str, str]]] = field(default_factory=dict)

    @classmethod
    def load(cls, conn: Any, model: Any) -> ValueIndex:
        index = cls()
        for cube in model.cubes.values():
            if not cube.sql_table:
                continue
            schema, _, table = cube.sql_table.rpartition(".")
            for dim in cube.dimensions.values():
                column = (dim.sql or "").strip()
                if dim.type != "string" or dim.primary_key or not dim.public or not re.fullmatch(r"\w+", column):
                    continue
                query = pgsql.SQL("SELECT DISTINCT {} FROM {} WHERE {} IS NOT NULL LIMIT {}").format(
                    pgsql.Identifier(column),
                    pgsql.Identifier(*([schema, table] if schema else [table])),
                    pgsql.Identifier(column), pgsql.Literal(MAX_VALUES + 1))
                values = [str(r[0]) for r in conn.execute(query).fetchall()]
                if len(values) <= MAX_VALUES:
                    for value in values:
                        index.add(dim.path, value)
        return index

    def add(self, member: str, value: str) -> None:
        words = value.split()
        bilingual = len(words) > 1 and any(_CJK.search(w) for w in words) and any(not _CJK.search(w) for w in words)
        for surface in {value, *(words if bilingual else [])}:
            key = surface.strip().lower()
            if len(key) >= 2 and not key.replace(".", "").isdigit() and key not in IGNORED:
                self.surfaces.setdefault(key, []).append((member, value))

    def filters(self, text: str, skip_members: set[str], skip_words: set[str] = frozenset()) -> list[dict[str, Any]]:
        """``equals`` filters for the values named in ``text`` (longest surface first, no overlaps);
        ``skip_words``: words the glossary already read as a value ("华东" -> regions.region_code)."""
        lowered = text.lower()
        taken = [m.span() for w in skip_words if w for m in re.finditer(re.escape(w.lower()), lowered)]
        found: dict[str, list[str]] = {}
        for surface in sorted(self.surfaces, key=len, reverse=True):
            for m in re.finditer(re.escape(surface), lowered):
                start, end = m.span()
                if any(s < end and start < e for s, e in taken) or not _bounded(lowered, start, end):
                    continue
                taken.append((start, end))
                for member, value in self.surfaces[surface]:
                    if member not in skip_members and value not in found.setdefault(member, []):
                        found[member].append(value)
        return [{"member": m, "operator": "equals", "values": v} for m, v in found.items() if v]


def _bounded(text: str, start: int, end: int) -> bool:
    """Latin surfaces sit on word boundaries ("Pulse" not inside "impulse")."""
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    return not (text[start].isascii() and before.isascii() and before.isalnum()) and \
        not (text[end - 1].isascii() and after.isascii() and after.isalnum())
