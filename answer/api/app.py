"""The Litestar application: ``create_app(settings, service=None) -> Litestar``.

Routes: /v1/ask (+ /stream), /v1/nl2cube, /v1/cube/load, /v1/feedback, /v1/ingest/*, /v1/catalog,
/v1/suggestions, /v1/queries/{id} (all behind the API-key and rate-limit guard), /healthz, /readyz,
/metrics, OpenAPI at /schema, the chat page at / and the dashboard at /dashboard.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

from litestar import Controller, Litestar, Router
from litestar.config.cors import CORSConfig
from litestar.di import Provide
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import Components, SecurityScheme
from litestar.static_files import create_static_files_router

from answer.api._service import AnswerService, ServiceAdapter
from answer.api.cache import AnswerCache
from answer.api.controllers.ask import AskController
from answer.api.controllers.catalog import CatalogController
from answer.api.controllers.cube import CubeController
from answer.api.controllers.feedback import FeedbackController
from answer.api.controllers.health import HealthController
from answer.api.controllers.ingest import IngestController
from answer.api.controllers.metrics import MetricsController
from answer.api.controllers.nl2cube import NL2CubeController
from answer.api.controllers.queries import QueriesController
from answer.api.controllers.suggestions import SuggestionsController
from answer.api.errors import EXCEPTION_HANDLERS
from answer.api.knowledge import Knowledge, PipelineKnowledge
from answer.api.origin import HostPolicy
from answer.api.security import TokenBuckets, api_guard, keys_required, trusted_networks
from answer.api.sessions import SessionMemory
from answer.api.store import PostgresStore, Store
from cubesage_core.settings import Settings

STATIC_DIR = Path(__file__).resolve().parent / "static"
VENDOR_MARKER = STATIC_DIR / "vendor" / "vega-embed.min.js"
log = logging.getLogger("cubesage.api")


def _default_service(settings: Settings, database_url: str) -> AnswerService:
    from answer.service import Cubesage

    return Cubesage(settings, url=database_url)


def create_app(
    settings: Settings,
    service: AnswerService | None = None,
    *,
    store: Store | None = None,
    knowledge: Knowledge | None = None,
    database_url: str | None = None,
) -> Litestar:
    """Build the API. Without arguments beyond ``settings`` everything real is wired from settings."""
    if not VENDOR_MARKER.exists():
        log.warning("chat page charts disabled: Vega-Lite is not vendored; run 'bash answer/api/web/vendor.sh'")
    if store is None or knowledge is None or service is None:
        from cubesage_core import db

        database_url = database_url or db.database_url(settings)
    store = store or PostgresStore(database_url or "")
    knowledge = knowledge or PipelineKnowledge(settings, database_url or "")
    adapter = ServiceAdapter(
        service if service is not None else _default_service(settings, database_url or ""),
        max_concurrent=settings.api_max_concurrent_answers,
    )
    sessions = SessionMemory(ttl_s=settings.api_session_ttl_s, max_sessions=settings.api_max_sessions)
    answer_cache = AnswerCache(settings.api_answer_cache_ttl_s, settings.api_answer_cache_size)
    app = Litestar(
        route_handlers=_route_handlers(),
        dependencies=_dependencies(settings, adapter, store, knowledge, sessions, answer_cache),
        exception_handlers=EXCEPTION_HANDLERS,
        cors_config=CORSConfig(allow_origins=list(settings.cors_origins)) if settings.cors_origins else None,
        request_max_body_size=settings.api_max_body_bytes,
        openapi_config=_openapi_config(),
        lifespan=[_lifespan(store)],
        debug=False,
    )
    _set_state(app, settings, store)
    return app


def _route_handlers() -> list[Router | type[Controller]]:
    """The /v1 API behind the API-key and rate-limit guard; health, metrics and the chat page outside it."""
    api = Router(
        path="/",
        guards=[api_guard],
        route_handlers=[
            AskController,
            NL2CubeController,
            CubeController,
            FeedbackController,
            IngestController,
            CatalogController,
            SuggestionsController,
            QueriesController,
        ],
        security=[{"apiKey": []}],
    )
    return [
        api,
        HealthController,
        MetricsController,
        create_static_files_router(
            path="/", directories=[STATIC_DIR], html_mode=True, name="chat", include_in_schema=False
        ),
    ]


def _dependencies(
    settings: Settings,
    service: ServiceAdapter,
    store: Store,
    knowledge: Knowledge,
    sessions: SessionMemory,
    answer_cache: AnswerCache,
) -> dict[str, Provide]:
    """What the handlers are given by name: the process's one instance of each."""

    def constant(value: Any) -> Provide:
        return Provide(lambda: value, use_cache=True, sync_to_thread=False)

    return {
        "service": constant(service),
        "store": constant(store),
        "knowledge": constant(knowledge),
        "sessions": constant(sessions),
        "settings": constant(settings),
        "answer_cache": constant(answer_cache),
    }


def _openapi_config() -> OpenAPIConfig:
    """The OpenAPI document at /schema, with the bearer API key as its security scheme."""
    return OpenAPIConfig(
        title="cubesage",
        version="0.1.0",
        path="/schema",
        description="Ask business questions in English or Chinese over the warehouse.",
        components=Components(
            security_schemes={
                "apiKey": SecurityScheme(type="http", scheme="bearer", description="token from 'cubesage keys create'")
            }
        ),
    )


def _lifespan(store: Store) -> Callable[[Litestar], AbstractAsyncContextManager[None]]:
    """The store opened when the app starts and closed when it stops."""

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        await store.open()
        try:
            yield
        finally:
            await store.close()

    return lifespan


def _set_state(app: Litestar, settings: Settings, store: Store) -> None:
    """What the guards and middleware read from the app: the store, settings, keys, rate limits, hosts."""
    app.state.store = store
    app.state.settings = settings
    app.state.require_keys = keys_required(settings)
    app.state.buckets = TokenBuckets(settings.api_rate_limit_per_min)
    app.state.auth_failures = TokenBuckets(settings.api_auth_failures_per_min)
    app.state.trusted_proxies = trusted_networks(settings)
    app.state.host_policy = HostPolicy(settings.api_host, settings.api_allowed_hosts, settings.cors_origins)
