"""API keys, rate limits, CORS and the helpers behind them."""

from __future__ import annotations

import time

from answer.api.security import TokenBuckets, is_loopback, keys_required
from answer.api.sessions import SessionMemory
from cubesage_core.settings import Settings

TOKEN = "cs_k1_secret-token"


def test_keys_are_required_off_loopback_and_checked(make_api) -> None:
    api = make_api(tokens={"k1": TOKEN}, api_host="0.0.0.0")
    missing = api.client.post("/v1/ask", json={"question": "GMV"})
    assert missing.status_code == 401 and "cubesage keys create" in missing.json()["detail"]
    wrong = api.client.post("/v1/ask", json={"question": "GMV"}, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    ok = api.client.post("/v1/ask", json={"question": "GMV"}, headers={"Authorization": f"Bearer {TOKEN}"})
    assert ok.status_code == 200
    assert api.store.log[ok.json()["query_id"]]["api_key_id"] == "k1"
    header = api.client.get("/v1/catalog", headers={"X-API-Key": TOKEN})
    assert header.status_code == 200
    assert api.client.get("/healthz").status_code == 200  # health and the page stay open
    assert api.client.get("/").status_code == 200


def test_loopback_demo_mode_needs_no_key(make_api) -> None:
    api = make_api(api_host="127.0.0.1")
    assert api.client.post("/v1/ask", json={"question": "GMV"}).status_code == 200


def test_explicit_setting_overrides_auto(make_api) -> None:
    api = make_api(api_host="127.0.0.1", api_require_keys=True)
    assert api.client.post("/v1/ask", json={"question": "GMV"}).status_code == 401


def test_rate_limit_answers_429_with_retry_after(make_api) -> None:
    api = make_api(tokens={"k1": TOKEN, "k2": "cs_k2_other"}, api_require_keys=True, api_rate_limit_per_min=3)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    codes = [api.client.get("/v1/catalog", headers=auth).status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    limited = api.client.get("/v1/catalog", headers=auth)
    assert int(limited.headers["retry-after"]) >= 1 and limited.json()["error"] == "rate_limited"
    other = api.client.get("/v1/catalog", headers={"Authorization": "Bearer cs_k2_other"})
    assert other.status_code == 200  # buckets are per key


def test_cors_is_configurable(make_api) -> None:
    api = make_api(cors_origins=["https://dash.example"])
    r = api.client.options(
        "/v1/ask", headers={"Origin": "https://dash.example", "Access-Control-Request-Method": "POST"}
    )
    assert r.headers.get("access-control-allow-origin") == "https://dash.example"
    closed = make_api()
    r = closed.client.get("/healthz", headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in r.headers


def test_loopback_detection_and_auto_mode() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("10.1.2.3")
    assert not keys_required(Settings(api_host="127.0.0.1"))
    assert keys_required(Settings(api_host="0.0.0.0"))
    assert not keys_required(Settings(api_host="0.0.0.0", api_require_keys=False))


def test_token_bucket_refills() -> None:
    buckets = TokenBuckets(per_min=60)
    assert all(buckets.take("a") == 0 for _ in range(60))
    wait = buckets.take("a")
    assert 0 < wait <= 1.0
    time.sleep(wait + 0.05)
    assert buckets.take("a") == 0
    assert TokenBuckets(per_min=0).take("a") == 0


def test_session_memory_expires_and_is_capped() -> None:
    memory = SessionMemory(ttl_s=0.2, max_sessions=2)
    memory.put("a", 1)
    memory.put("b", 2)
    memory.put("c", 3)
    assert memory.get("a") is None and memory.get("b") == 2 and len(memory) == 2
    time.sleep(0.25)
    assert memory.get("b") is None
    memory.put(None, 4)
    assert memory.get(None) is None


def test_scopes_and_their_names() -> None:
    import pytest

    from answer.keys import KeyGrant, check_scopes, has_scope

    assert check_scopes(["INGEST", "ask", "ask"]) == ("ask", "ingest")
    with pytest.raises(ValueError, match="unknown scope"):
        check_scopes(["root"])
    with pytest.raises(ValueError, match="at least one"):
        check_scopes([" "])
    assert has_scope({"admin"}, "ingest") and has_scope({"ingest"}, "ingest") and not has_scope({"ask"}, "admin")
    assert KeyGrant("k", frozenset({"ask"})).allows("ask") and not KeyGrant("k", frozenset({"ask"})).allows("ingest")


def test_proxy_and_host_settings_parse_comma_lists(monkeypatch) -> None:
    import pytest
    from pydantic import ValidationError

    monkeypatch.setenv("CUBESAGE_API_TRUSTED_PROXIES", "10.0.0.0/8, 192.0.2.1")
    monkeypatch.setenv("CUBESAGE_API_ALLOWED_HOSTS", "cubesage.internal")
    settings = Settings()
    assert settings.api_trusted_proxies == ["10.0.0.0/8", "192.0.2.1"]
    assert settings.api_allowed_hosts == ["cubesage.internal"]
    monkeypatch.setenv("CUBESAGE_API_TRUSTED_PROXIES", "not-an-ip")
    with pytest.raises(ValidationError, match="not an IP"):
        Settings()
