"""Session-wide real services for the test suite.

Started once per session on free ports and torn down after:
- ``pg_url``: embedded PostgreSQL 18 + pgvector with the cubesage schema and the demo
  warehouse loaded (scale ``CUBESAGE_TEST_SCALE``, default 1.0);
- ``cube``: a real Cube server (npm, pinned) over the demo models and that database;
- ``es_url``: a real Elasticsearch node from Maven Central jars, or ``CUBESAGE_TEST_ES_URL``.
Services start lazily: a unit-test-only run starts none of them.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cubesage_core import db
from cubesage_core.embedded_pg import EmbeddedPostgres
from cubesage_core.settings import REPO_ROOT
from demo import load as demo_warehouse

SERVICE_TIMINGS: dict[str, float] = {}

# the suite runs on the demo warehouse: its model, detail vocabulary and glossary, as `cubesage demo` sets them
for _var, _name in (
    ("CUBESAGE_MODEL_DIR", "model"),
    ("CUBESAGE_DETAIL_VOCABULARY", "detail_vocabulary.yaml"),
    ("CUBESAGE_GLOSSARY", "glossary.yaml"),
):
    os.environ.setdefault(_var, str(REPO_ROOT / "demo" / _name))
# a cubesage.toml left in the working directory (by `cubesage init` or `warehouse load`) must not reach the tests
os.environ.setdefault("CUBESAGE_CONFIG", os.devnull)


@pytest.fixture(scope="session")
def services_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="cubesage-test-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_server(services_dir: Path) -> Iterator[EmbeddedPostgres]:
    started = time.monotonic()
    server = EmbeddedPostgres(services_dir / "pg")
    server.start()
    SERVICE_TIMINGS["postgres_start_s"] = time.monotonic() - started
    yield server
    server.stop()


@pytest.fixture(scope="session")
def pg_url(pg_server: EmbeddedPostgres) -> str:
    """URL of the test database: schema applied and demo warehouse loaded."""
    running = pg_server.running()
    assert running is not None
    url = running.url()
    db.apply_schema(url)
    started = time.monotonic()
    demo_warehouse.load(url, scale=float(os.environ.get("CUBESAGE_TEST_SCALE", "1.0")))
    SERVICE_TIMINGS["warehouse_load_s"] = time.monotonic() - started
    return url


@pytest.fixture(scope="session")
def demo_ready(pg_url: str) -> Any:
    """The demo content on the session DB, built once: semantic assets, glossary, few-shots, SAG indices."""
    from pydantic import SecretStr

    from cubesage_core.settings import Settings
    from demo.build import prepare_demo

    started = time.monotonic()
    report = prepare_demo(Settings(database_url=SecretStr(pg_url)), pg_url, reload_warehouse=False)
    SERVICE_TIMINGS["demo_content_s"] = time.monotonic() - started
    return report


@pytest.fixture(scope="session")
def cube(pg_url: str, services_dir: Path):
    """A real Cube server (0.33.65) over demo/model and the test warehouse."""
    from tests.infra.cube.cube_server import start_cube

    started = time.monotonic()
    server = start_cube(pg_url, REPO_ROOT / "demo" / "model", services_dir / "cube")
    SERVICE_TIMINGS["cube_start_s"] = time.monotonic() - started
    yield server
    server.stop()


@pytest.fixture(scope="session")
def es_url(services_dir: Path) -> Iterator[str]:
    """A real Elasticsearch node: ``CUBESAGE_TEST_ES_URL`` if set, else one started from Maven jars."""
    external = os.environ.get("CUBESAGE_TEST_ES_URL")
    if external:
        yield external.rstrip("/")
        return
    from tests.infra.elasticsearch.es_server import start_elasticsearch

    started = time.monotonic()
    server = start_elasticsearch(services_dir / "es")
    SERVICE_TIMINGS["elasticsearch_start_s"] = time.monotonic() - started
    yield server.url
    server.stop()


# the folder a test lives in sets its marker: `pytest -m unit` (`make unit`) runs what starts no service
FOLDER_MARKERS = ("unit", "integration", "e2e")
SERVICES = "services_dir"  # every service fixture (PostgreSQL, Cube, Elasticsearch) starts from this one


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    root = Path(__file__).parent
    for item in items:
        parts = item.path.relative_to(root).parts
        folder = parts[0] if len(parts) > 1 else ""
        if folder in FOLDER_MARKERS:
            item.add_marker(folder)
        if folder == "unit" and SERVICES in getattr(item, "fixturenames", ()):
            raise pytest.UsageError(f"{item.nodeid} is a unit test but starts a service: move it to tests/integration")


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    if SERVICE_TIMINGS:
        terminalreporter.write_line(
            "service timings: " + ", ".join(f"{k}={v:.2f}" for k, v in sorted(SERVICE_TIMINGS.items()))
        )
