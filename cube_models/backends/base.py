"""The backend interface and its result type."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from cube_models.query import CubeQuery


@dataclass
class LoadResult:
    rows: list[dict[str, Any]]
    sql: str
    backend: str  # "cube" | "builtin"
    fallback_reason: str | None = None
    total: int | None = None
    annotation: dict[str, Any] = field(default_factory=dict)
    elapsed_ms: float = 0.0
    params: list[Any] = field(default_factory=list)
    cached: bool = False  # served from the built-in backend's result cache
    rollup: str | None = None  # the pre-aggregation whose table answered (built-in backend)

    def to_dict(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "fallback_reason": self.fallback_reason,
            "sql": self.sql,
            "params": self.params,
            "total": self.total,
            "elapsed_ms": round(self.elapsed_ms, 2),
            "cached": self.cached,
            "rollup": self.rollup,
            "rows": self.rows,
            "annotation": self.annotation,
        }


QueryInput = CubeQuery | dict[str, Any] | str


class SemanticBackend(ABC):
    """Runs Cube queries; ``today`` anchors relative date ranges ("last month")."""

    name: str = ""

    @abstractmethod
    def load(self, query: QueryInput, today: date | None = None) -> LoadResult: ...

    @abstractmethod
    async def aload(self, query: QueryInput, today: date | None = None) -> LoadResult: ...

    @abstractmethod
    def sql(self, query: QueryInput, today: date | None = None) -> str: ...

    @abstractmethod
    def close(self) -> None:
        """Release the backend's connections."""
