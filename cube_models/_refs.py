"""Cube SQL templates: find ``{CUBE}``, ``{cube}``, ``{member}`` and ``{cube.member}`` references.

Model SQL keeps Cube's template syntax; the compiler swaps each reference for a placeholder
identifier, parses the result with sqlglot and substitutes AST nodes (no string surgery on SQL).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

REF_RE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z_][A-Za-z0-9_]*))?\}")
PLACEHOLDER_PREFIX = "__cubesage_ref_"


@dataclass(frozen=True)
class Ref:
    """One reference: ``kind`` is ``cube`` (a table alias, followed by ``.col``) or ``member``."""

    kind: str
    cube: str
    name: str | None = None

    @property
    def path(self) -> str:
        return f"{self.cube}.{self.name}"


def classify(sql: str, cube: str, cube_names: set[str], own_members: set[str]) -> list[tuple[str, Ref | str]]:
    """Each reference in ``sql`` as ``(raw text, Ref)``, or ``(raw text, error message)`` when unknown."""
    out: list[tuple[str, Ref | str]] = []
    for match in REF_RE.finditer(sql):
        first, second = match.group(1), match.group(2)
        followed_by_dot = sql[match.end() : match.end() + 1] == "."
        if second is not None:
            if first == "CUBE":
                out.append((match.group(0), Ref("member", cube, second)))
            elif first in cube_names:
                out.append((match.group(0), Ref("member", first, second)))
            else:
                out.append((match.group(0), f"unknown cube '{first}' in reference {match.group(0)}"))
        elif first == "CUBE":
            out.append((match.group(0), Ref("cube", cube)))
        elif first in own_members and not followed_by_dot:
            out.append((match.group(0), Ref("member", cube, first)))
        elif first in cube_names:
            out.append((match.group(0), Ref("cube", first)))
        else:
            out.append((match.group(0), f"unknown member or cube '{first}' in reference {match.group(0)}"))
    return out


def to_placeholders(sql: str) -> tuple[str, list[str]]:
    """Replace each reference with ``__cubesage_ref_<i>`` (an identifier sqlglot can parse)."""
    raws: list[str] = []

    def swap(match: re.Match[str]) -> str:
        raws.append(match.group(0))
        return f"{PLACEHOLDER_PREFIX}{len(raws) - 1}"

    return REF_RE.sub(swap, sql), raws
