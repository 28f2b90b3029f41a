"""GET /v1/queries/{query_id}: the stored provenance of one answered question (semlayer.query_log)."""

from __future__ import annotations

from uuid import UUID

from litestar import Controller, get

from answer.api.dto import QueryRecord
from answer.api.errors import NotFound, error_responses
from answer.api.store import Store


class QueriesController(Controller):
    path = "/v1/queries"
    tags = ("audit",)

    @get("/{query_id:uuid}", summary="Stored provenance of one answer", responses=error_responses(401, 403, 404, 429))
    async def get_query(self, query_id: UUID, store: Store) -> QueryRecord:
        record = await store.get_query(query_id)
        if record is None:
            raise NotFound(f"no query with id {query_id}")
        return record
