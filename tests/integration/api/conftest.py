"""Fixtures for API integration tests: the real app (real Cubesage service, PostgreSQL, Cube) on loopback.

The demo content (assets, glossary, few-shots, SAG) comes from the session fixture ``demo_ready``
in tests/conftest.py; the app uses the session ``pg_url`` and ``cube``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.live_api import LiveApi, api_settings, running_api

__all__ = ["LiveApi", "api_settings", "running_api"]


@pytest.fixture(scope="session")
def live_api(demo_ready: Any, pg_url: str, cube: Any) -> Iterator[LiveApi]:
    """One API for the module's tests: Cube (session server) with the built-in fallback."""
    settings = api_settings(pg_url, cube_url=cube.url, cube_secret=cube.secret)
    with running_api(settings, pg_url) as api:
        yield api
