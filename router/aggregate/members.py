"""Model lookups for slot filling: group-by concepts -> dimensions, reachability along joins.

A concept ("region", "渠道", "product category") is matched against dimension names, titles and cube
names (Chinese words through ``dimension_aliases.yaml``). Among matches: dimensions reachable from the
measure's cube along the model's joins win, then string over number, non-key over key/id columns, then
the question's language for ``*_en``/``*_zh`` pairs; a concept naming a cube picks its name-like column.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

import yaml

from cube_models.model import Member, SemanticModel
from router.aggregate.types import AggregateError

_ALIASES_FILE = Path(__file__).with_name("dimension_aliases.yaml")


@lru_cache(maxsize=1)
def aliases() -> dict[str, str]:
    return {str(k).lower(): str(v).lower() for k, v in yaml.safe_load(_ALIASES_FILE.read_text()).items()}


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def _words(text: str) -> set[str]:
    return {_singular(w) for w in re.findall(r"[a-z0-9]+", text.lower().replace("_", " "))}


def concept_words(concept: str) -> set[str]:
    concept = concept.lower().strip()
    mapped = aliases().get(concept)
    if mapped is None:
        # longest alias contained in the concept ("支付方式分布" -> payment method)
        hits = [k for k in aliases() if k in concept and not k.isascii()]
        mapped = aliases()[max(hits, key=len)] if hits else None
    return _words(mapped or concept)


def row_count(model: SemanticModel, cube: str) -> str | None:
    """The measure that counts a cube's rows: type ``count``, or a distinct count of its primary key,
    without filters (the one named ``count`` first); None when the model defines none."""
    found = getattr(model, "cubes", {}).get(cube)
    if found is None:
        return None
    keys = {d.sql for d in found.primary_keys}
    plain = [
        m
        for m in found.measures.values()
        if not m.filters and (m.type == "count" or (m.type.startswith("count_distinct") and m.sql in keys))
    ]
    plain.sort(key=lambda m: m.name != "count")
    return plain[0].path if plain else None


def reachable_cubes(model: SemanticModel, start: str) -> dict[str, int]:
    """Cubes reachable from ``start`` along declared joins, with hop counts."""
    hops = {start: 0}
    queue = deque([start])
    while queue:
        cube = queue.popleft()
        for join in model.cubes[cube].joins:
            if join.target not in hops and join.target in model.cubes:
                hops[join.target] = hops[cube] + 1
                queue.append(join.target)
    return hops


def resolve_dimension(model: SemanticModel, concept: str, measure_cubes: Iterable[str], language: str) -> str | None:
    """The dimension member a group-by concept names, or None."""
    wanted = concept_words(concept)
    if not wanted:
        return None
    reach: dict[str, int] = {}
    for cube in measure_cubes:
        for name, hop in reachable_cubes(model, cube).items():
            reach[name] = min(hop, reach.get(name, hop))
    best: tuple[float, str] | None = None
    for dim in model.dimensions():
        if dim.type == "time" or not getattr(dim, "public", True):
            continue
        owner = model.cubes[dim.cube]
        own = _words(dim.name) | _words(dim.title or "")
        cube_words = _words(dim.cube) | _words(owner.title or "")
        overlap = len(wanted & own)
        names_cube = wanted <= cube_words
        if not overlap and not names_cube:
            continue
        score = 3.0 * overlap / len(wanted) + (2.0 if wanted <= own else 0.0)
        if names_cube:
            score += 1.5 + (2.0 if "name" in own else 0.0)
        if dim.cube in reach:
            score += 3.0 - 0.3 * reach[dim.cube]
        score += 0.5 if dim.type == "string" else 0.0
        score -= 2.0 if dim.primary_key or dim.name.endswith("_id") or dim.name == "id" else 0.0
        suffix = dim.name.rsplit("_", 1)[-1]
        if suffix in ("en", "zh"):
            score += 0.8 if suffix == language else -0.8
        if best is None or score > best[0]:
            best = (score, dim.path)
    return best[1] if best and best[0] > 2.0 else None


def known_member(model: SemanticModel, path: str) -> Member:
    """The member at ``path``, one the caller found in the model (an unknown one is an error)."""
    member = model.find_member(path)
    if member is None:
        raise AggregateError(f"{path} is not a member of the model")
    return member


def measure_cubes(measures: list[str]) -> list[str]:
    return list(dict.fromkeys(m.split(".", 1)[0] for m in measures))


def language_variant(model: SemanticModel, member: str, language: str) -> str:
    """``countries.title_en`` -> ``countries.title_zh`` for a Chinese question when that sibling exists."""
    stem, _, suffix = member.rpartition("_")
    if suffix in ("en", "zh") and suffix != language and model.find_member(f"{stem}_{language}") is not None:
        return f"{stem}_{language}"
    return member


def same_column_averages(model: SemanticModel, measure: Member) -> list[str]:
    """The avg measures of ``measure``'s cube over the same column (its "average ..." form)."""
    return [m.path for m in model.cubes[measure.cube].measures.values() if m.type == "avg" and m.sql == measure.sql]
