"""Semantic backends: run a Cube query on Cube's REST API or on the built-in compiler.

``get_backend(settings, url, model)`` picks Cube when ``settings.cube_url`` is set (falling back to
the built-in compiler when Cube is unreachable and ``cube_fallback_builtin`` is true), else the
built-in compiler on the warehouse database.
"""

from __future__ import annotations

from cube_models.backends.base import LoadResult, SemanticBackend
from cube_models.backends.builtin import BuiltinBackend
from cube_models.backends.cube import CubeBackend
from cube_models.backends.fallback import FallbackBackend, get_backend

__all__ = ["BuiltinBackend", "CubeBackend", "FallbackBackend", "LoadResult", "SemanticBackend", "get_backend"]
