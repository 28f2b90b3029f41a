"""Cube first, the built-in compiler when Cube is unreachable (connection refused, timeout, 5xx)."""

from __future__ import annotations

import time
from datetime import date

from cube_models.backends.base import LoadResult, QueryInput, SemanticBackend
from cube_models.backends.builtin import BuiltinBackend
from cube_models.backends.cube import CubeBackend
from cube_models.client import CubeClient
from cube_models.errors import CubeServerError, CubeTimeoutError, CubeUnavailableError
from cube_models.model import SemanticModel
from cubesage_core.settings import Settings

UNREACHABLE = (CubeUnavailableError, CubeTimeoutError, CubeServerError)


class FallbackBackend(SemanticBackend):
    """Runs ``primary``; on an unreachable-Cube error runs ``fallback`` and says why in ``fallback_reason``.
    After a failure Cube is skipped for ``cooldown_s`` so a dead server does not slow every query."""

    name = "cube"

    def __init__(self, primary: SemanticBackend, fallback: SemanticBackend, cooldown_s: float = 30.0) -> None:
        self.primary, self.fallback, self.cooldown_s = primary, fallback, cooldown_s
        self._down_until = 0.0
        self._last_error = ""

    def _skip(self) -> str | None:
        if time.monotonic() < self._down_until:
            return (
                f"Cube unreachable (retried after {self.cooldown_s:.0f}s), used the built-in compiler: "
                f"{self._last_error}"
            )
        return None

    def _failed(self, exc: Exception) -> str:
        self._down_until, self._last_error = time.monotonic() + self.cooldown_s, str(exc)
        return f"Cube unreachable, used the built-in compiler: {exc}"

    def load(self, query: QueryInput, today: date | None = None) -> LoadResult:
        reason = self._skip()
        if reason is None:
            try:
                return self.primary.load(query, today)
            except UNREACHABLE as exc:
                reason = self._failed(exc)
        result = self.fallback.load(query, today)
        result.fallback_reason = reason
        return result

    async def aload(self, query: QueryInput, today: date | None = None) -> LoadResult:
        reason = self._skip()
        if reason is None:
            try:
                return await self.primary.aload(query, today)
            except UNREACHABLE as exc:
                reason = self._failed(exc)
        result = await self.fallback.aload(query, today)
        result.fallback_reason = reason
        return result

    def close(self) -> None:
        self.primary.close()
        self.fallback.close()

    def sql(self, query: QueryInput, today: date | None = None) -> str:
        if self._skip() is None:
            try:
                return self.primary.sql(query, today)
            except UNREACHABLE as exc:
                self._failed(exc)
        return self.fallback.sql(query, today)


def get_backend(settings: Settings, url: str | None, model: SemanticModel) -> SemanticBackend:
    """Cube when ``settings.cube_url`` is set (wrapped with the built-in fallback if allowed and a database URL
    is known), else the built-in compiler on ``url``."""
    if settings.cube_url:
        secret = settings.cube_secret.get_secret_value() if settings.cube_secret else ""
        cube = CubeBackend(CubeClient(settings.cube_url, secret))
        if settings.cube_fallback_builtin and url:
            return FallbackBackend(cube, BuiltinBackend(url, model, settings))
        return cube
    if not url:
        raise ValueError("the built-in backend needs a database URL")
    return BuiltinBackend(url, model, settings)
