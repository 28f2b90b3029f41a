"""API unit-test fixtures: the real app wired to small fakes (service, store, knowledge)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from answer.api import create_app
from cubesage_core.settings import Settings
from tests.unit.api.fakes import FakeKnowledge, FakeService, MemoryStore


class Harness:
    def __init__(self, client: TestClient, service: FakeService, store: MemoryStore, knowledge: FakeKnowledge) -> None:
        self.client, self.service, self.store, self.knowledge = client, service, store, knowledge


@pytest.fixture
def make_api() -> Iterator[Callable[..., Harness]]:
    clients: list[TestClient] = []

    def make(
        tokens: dict[str, str] | None = None,
        scopes: dict[str, set[str]] | None = None,
        base_url: str = "http://127.0.0.1:8088",
        **settings: Any,
    ) -> Harness:
        service, store, knowledge = FakeService(), MemoryStore(tokens, scopes), FakeKnowledge()
        app = create_app(Settings(**settings), service, store=store, knowledge=knowledge)
        client = TestClient(app, base_url=base_url, raise_server_exceptions=False)
        client.__enter__()
        clients.append(client)
        return Harness(client, service, store, knowledge)

    yield make
    for client in clients:
        client.__exit__(None, None, None)


@pytest.fixture
def api(make_api: Callable[..., Harness]) -> Harness:
    return make_api()
