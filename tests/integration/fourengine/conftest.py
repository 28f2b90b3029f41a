"""A dedicated database for the fourengine tests (same server as ``pg_url``): the demo model's semantic assets
(cube_models.export), the demo glossary and few-shots."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cube_models.export import export_assets
from cube_models.model import load_model
from cubesage_core.embeddings import get_embedder
from cubesage_core.scratch import scratch_database
from cubesage_core.settings import REPO_ROOT
from fourengine.fewshot_cache import load_few_shots
from fourengine.glossary import load_glossary
from fourengine.retrieve import Retriever

DB_NAME = "fourengine_it"


@pytest.fixture(scope="session")
def fe_url(pg_url: str) -> str:
    url = scratch_database(pg_url, DB_NAME, fresh=True)
    embedder = get_embedder("use")
    export_assets(url, load_model(REPO_ROOT / "demo" / "model"), embedder=embedder)
    load_glossary(url, REPO_ROOT / "demo" / "glossary.yaml", embedder=embedder)
    load_few_shots(url, REPO_ROOT / "demo" / "few_shots.yaml", embedder=embedder)
    return url


@pytest.fixture(scope="session")
def retriever(fe_url: str) -> Iterator[Retriever]:
    r = Retriever(fe_url, embedder=get_embedder("use"))
    yield r
    r.close()
