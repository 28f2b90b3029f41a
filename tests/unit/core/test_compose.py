"""compose.yaml parses and wires the production services with health checks and volumes."""

from __future__ import annotations

import yaml

from cubesage_core.settings import REPO_ROOT


def test_compose_defines_the_stack() -> None:
    compose = yaml.safe_load((REPO_ROOT / "compose.yaml").read_text())
    services = compose["services"]
    assert set(services) == {"postgres", "elasticsearch", "cube", "api"}
    for name, service in services.items():
        assert "healthcheck" in service, name
    assert "pgvector" in services["postgres"]["image"]
    assert any("demo/model" in v for v in services["cube"]["volumes"])
    assert set(compose["volumes"]) >= {"pgdata", "esdata"}
    api_env = services["api"]["environment"]
    assert {"CUBESAGE_DATABASE_URL", "CUBESAGE_CUBE_URL", "CUBESAGE_ES_URL"} <= set(api_env)


def test_the_api_connects_as_its_own_role() -> None:
    compose = yaml.safe_load((REPO_ROOT / "compose.yaml").read_text())
    api_env = compose["services"]["api"]["environment"]
    assert api_env["CUBESAGE_API_DATABASE_URL"].startswith("postgresql://cubesage_api:")
