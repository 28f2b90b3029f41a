"""Typed errors of the semantic layer: model errors, query errors, Cube server errors."""

from __future__ import annotations


class CubeModelsError(Exception):
    """Base of every error raised by ``cube_models``."""


class ModelError(CubeModelsError):
    """A Cube YAML model is invalid; says which file, cube and member."""

    def __init__(
        self, message: str, file: str | None = None, cube: str | None = None, member: str | None = None
    ) -> None:
        self.file, self.cube, self.member, self.reason = file, cube, member, message
        where = [p for p in (file, f"cube '{cube}'" if cube else None, f"member '{member}'" if member else None) if p]
        super().__init__(f"{': '.join(where)}: {message}" if where else message)


class QueryError(CubeModelsError):
    """A Cube query is malformed or does not fit the model (a 4xx, never a crash)."""


class CubeError(CubeModelsError):
    """An error answered by (or on the way to) a Cube server; ``message`` is Cube's own text."""

    retryable = False

    def __init__(self, message: str, status: int | None = None) -> None:
        self.message, self.status = message, status
        super().__init__(f"Cube {status}: {message}" if status else f"Cube: {message}")


class CubeUserError(CubeError):
    """HTTP 400: Cube rejected the query (unknown member, bad format...)."""


class CubeAuthError(CubeError):
    """HTTP 401/403: the JWT was refused."""


class CubeServerError(CubeError):
    """HTTP 5xx from Cube."""

    retryable = True


class CubeUnavailableError(CubeError):
    """Connection refused or reset: the Cube server is not reachable."""

    retryable = True


class CubeTimeoutError(CubeError):
    """The request (or the bounded 'Continue wait' loop) ran out of time."""

    retryable = True
