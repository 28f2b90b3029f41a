"""Shared objects for the cube_models integration tests: one model, one Cube client, one builtin backend."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cube_models.backends import BuiltinBackend, CubeBackend
from cube_models.client import CubeClient
from cube_models.model import SemanticModel, load_model
from cubesage_core.settings import REPO_ROOT, Settings


@pytest.fixture(scope="session")
def demo_model() -> SemanticModel:
    return load_model(REPO_ROOT / "demo" / "model")


@pytest.fixture(scope="session")
def cube_client(cube) -> Iterator[CubeClient]:
    client = CubeClient(cube.url, cube.secret)
    yield client
    client.close()


@pytest.fixture(scope="session")
def cube_backend(cube_client: CubeClient) -> CubeBackend:
    return CubeBackend(cube_client, with_sql=False)


@pytest.fixture(scope="session")
def builtin(pg_url: str, demo_model: SemanticModel) -> Iterator[BuiltinBackend]:
    backend = BuiltinBackend(pg_url, demo_model, Settings(_env_file=None))
    yield backend
    backend.close()
