"""The semantic model: cubes, measures, dimensions, segments, joins and views loaded from Cube YAML.

``load_model(path)`` reads a folder of ``*.yml``/``*.yaml`` files (cached per path and file
mtimes) and validates them; errors name the file, the cube and the member. The types live in ``_types``.
"""

from __future__ import annotations

import threading
from pathlib import Path

from cube_models._loader import build_model
from cube_models._types import (
    DIMENSION_TYPES,
    GRANULARITIES,
    MEASURE_TYPES,
    RELATIONSHIPS,
    Cube,
    Dimension,
    Join,
    Measure,
    Member,
    PreAggregation,
    RollingWindow,
    Segment,
    SemanticModel,
    View,
)
from cube_models.errors import ModelError

__all__ = [
    "DIMENSION_TYPES",
    "GRANULARITIES",
    "MEASURE_TYPES",
    "RELATIONSHIPS",
    "Cube",
    "Dimension",
    "Join",
    "Measure",
    "Member",
    "PreAggregation",
    "RollingWindow",
    "Segment",
    "SemanticModel",
    "View",
    "load_model",
    "model_files",
]

_CACHE: dict[tuple[str, tuple[tuple[str, float], ...]], SemanticModel] = {}
_CACHE_LOCK = threading.Lock()


def model_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*") if p.suffix in (".yml", ".yaml") and p.is_file())


def load_model(path: Path | str) -> SemanticModel:
    """Load and validate every Cube YAML file under ``path`` (cached per path and file mtimes)."""
    root = Path(path).resolve()
    if not root.exists():
        raise ModelError(f"model path {root} does not exist")
    files = model_files(root)
    key = (str(root), tuple((str(f), f.stat().st_mtime) for f in files))
    with _CACHE_LOCK:
        cached = _CACHE.get(key)
    if cached is not None:
        return cached
    model = build_model(files, source=str(root))
    with _CACHE_LOCK:
        for old in [k for k in _CACHE if k[0] == key[0]]:
            del _CACHE[old]
        _CACHE[key] = model
    return model
