"""The Cube backend: send the query to Cube's /v1/load (and /v1/sql for the SQL text).

With ``today`` given, relative ``dateRange`` strings are resolved here into absolute ranges first, so
Cube and the built-in compiler agree on what "last month" means (Cube would use its own clock).
"""

from __future__ import annotations

import json
import time
from datetime import date
from typing import Any

from cube_models.backends.base import LoadResult, QueryInput, SemanticBackend
from cube_models.client import CubeClient
from cube_models.dates import resolve_date_range
from cube_models.query import CubeQuery


def anchored(query: CubeQuery, today: date | None) -> dict[str, Any]:
    """The query as Cube JSON; relative date ranges resolved against ``today`` when it is given."""
    body = query.to_dict()
    if today is None:
        return body
    for td in body.get("timeDimensions", []):
        if isinstance(td.get("dateRange"), str):
            td["dateRange"] = list(resolve_date_range(td["dateRange"], today))
    return body


class CubeBackend(SemanticBackend):
    name = "cube"

    def __init__(self, client: CubeClient, with_sql: bool = True) -> None:
        self.client, self.with_sql = client, with_sql

    def close(self) -> None:
        self.client.close()

    def _sql_text(self, sql: dict[str, Any]) -> tuple[str, list[Any]]:
        text, params = (sql.get("sql") or ["", []])[:2]
        return text, list(params or [])

    def sql(self, query: QueryInput, today: date | None = None) -> str:
        return self._sql_text(self.client.sql(anchored(CubeQuery.parse(query), today)))[0]

    def _result(self, body: dict[str, Any], sql: dict[str, Any] | None, started: float) -> LoadResult:
        text, params = self._sql_text(sql) if sql else ("", [])
        return LoadResult(
            rows=body.get("data", []),
            sql=text,
            backend=self.name,
            total=body.get("total"),
            annotation=body.get("annotation", {}),
            elapsed_ms=(time.perf_counter() - started) * 1000,
            params=params,
        )

    def load(self, query: QueryInput, today: date | None = None) -> LoadResult:
        started = time.perf_counter()
        body = anchored(CubeQuery.parse(query), today)
        result = self.client.load(body)
        sql = self.client.sql(body) if self.with_sql else None
        return self._result(result, sql, started)

    async def aload(self, query: QueryInput, today: date | None = None) -> LoadResult:
        started = time.perf_counter()
        body = anchored(CubeQuery.parse(query), today)
        result = await self.client.aload(body)
        sql = await self.client.asql(body) if self.with_sql else None
        return self._result(result, sql, started)

    def __repr__(self) -> str:
        return f"CubeBackend({json.dumps(self.client.url)})"
