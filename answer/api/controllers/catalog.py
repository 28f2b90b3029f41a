"""GET /v1/catalog: the metrics, dimensions and business terms (with definitions) people can ask about."""

from __future__ import annotations

from litestar import Controller, get

from answer.api.dto import CatalogResponse
from answer.api.errors import error_responses
from answer.api.store import Store


class CatalogController(Controller):
    path = "/v1/catalog"
    tags = ("catalog",)

    @get("/", summary="Metrics, dimensions and glossary terms", responses=error_responses(401, 403, 429))
    async def catalog(self, store: Store) -> CatalogResponse:
        return await store.catalog()
