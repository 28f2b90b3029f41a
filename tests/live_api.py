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
    """The real service and app for ``settings``, served on a free loopback port, connected as the API role."""
    from answer.service import Cubesage
    from cubesage_core.db import api_url

    url = api_url(settings, pg_url)  # as `cubesage serve`: the API's role, no superuser rights
    service = Cubesage(settings, url=url)
    try:
        app = create_app(settings, service, database_url=url)
        with serve_in_thread(app) as url:
            yield LiveApi(url, service, app)
    finally:
        service.close()
