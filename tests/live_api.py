"""The real API (Cubesage service + Litestar app) served on loopback, for integration and e2e tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from typing import Any

from answer.api import create_app
from cubesage_core.settings import Settings
from tests.serve_app import serve_in_thread

TODAY = date(2025, 6, 30)


def api_settings(pg_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {"database_url": pg_url, "today": TODAY, "api_rate_limit_per_min": 0}
    values.update(overrides)
    return Settings(**values)


@dataclass
class LiveApi:
    url: str
    service: Any
    app: Any


@contextmanager
def running_api(settings: Settings, pg_url: str) -> Iterator[LiveApi]:
    """The real service and app for ``settings``, served on a free loopback port."""
    from answer.service import Cubesage

    service = Cubesage(settings, url=pg_url)
    try:
        app = create_app(settings, service, database_url=pg_url)
        with serve_in_thread(app) as url:
            yield LiveApi(url, service, app)
    finally:
        service.close()
