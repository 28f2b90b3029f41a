"""GET /v1/suggestions: questions built from the model (measures x dimensions x time) for the chat page,
with the day relative dates resolve against and the months the data covers."""

from __future__ import annotations

from typing import Literal

from litestar import Controller, get

from answer.api._service import ServiceAdapter
from answer.api.dto import SuggestionsResponse
from answer.api.errors import error_responses


class SuggestionsController(Controller):
    path = "/v1/suggestions"
    tags = ("catalog",)

    @get("/", summary="Suggested questions built from the model", responses=error_responses(401, 429, 503))
    async def suggestions(self, service: ServiceAdapter, language: Literal["en", "zh"] = "en") -> SuggestionsResponse:
        result = await service.suggestions(language)
        return SuggestionsResponse(
            questions=list(result.get("questions") or []),
            today=str(result.get("today") or ""),
            period=result.get("period"),
        )
