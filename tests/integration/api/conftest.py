"""Fixtures for API integration tests: the real app (real Cubesage service, PostgreSQL, Cube) on loopback.

The demo content (assets, glossary, few-shots, SAG) comes from the session fixture ``demo_ready``
in tests/conftest.py; the app uses the session ``pg_url`` and ``cube``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from typing import Any

import pytest

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


@pytest.fixture(scope="session")
def live_api(demo_ready: Any, pg_url: str, cube: Any) -> Iterator[LiveApi]:
    """One API for the module's tests: Cube (session server) with the built-in fallback."""
    settings = api_settings(pg_url, cube_url=cube.url, cube_secret=cube.secret)
    with running_api(settings, pg_url) as api:
        yield api
