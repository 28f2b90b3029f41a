"""The API's request boundary: JSON-only bodies, body shape, Host/Origin in keyless mode, failed-auth limits,
client addresses behind proxies."""

from __future__ import annotations

import ipaddress
import json

from answer.api.body import shape_problem
from answer.api.origin import HostPolicy, hostname
from answer.api.security import client_ip

ASK = {"question": "GMV by region"}


def test_bodies_must_be_declared_json(api) -> None:
    plain = api.client.post("/v1/ask", content=b'{"question": "GMV"}', headers={"Content-Type": "text/plain"})
    assert plain.status_code == 415 and "application/json" in plain.json()["detail"]
    form = api.client.post(
        "/v1/ask", content=b"question=GMV", headers={"Content-Type": "application/x-www-form-urlencoded"}
    )
    assert form.status_code == 415
    missing = api.client.post("/v1/ask", content=b'{"question": "GMV"}', headers={"Content-Type": ""})
    assert missing.status_code == 415
    assert api.service.calls == []
    typed = api.client.post(
        "/v1/ask", content=b'{"question": "GMV"}', headers={"Content-Type": "application/json; charset=utf-8"}
    )
    assert typed.status_code == 200
    wiki = {"documents": [{"name": "p", "content": "# P"}]}
    cross = api.client.post("/v1/ingest/wiki", content=json.dumps(wiki), headers={"Content-Type": "text/plain"})
    assert cross.status_code in (401, 415) and api.knowledge.ingested == {}


def test_malformed_bodies_get_400_not_500(api) -> None:
    deep = b'{"question": "GMV", "today": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    cases = [
        deep,
        b'{"question": "GMV\\u0000"}',
        b'{"question": "x", "session_id": "a\\u0000b"}',
        b"{oops",
        b'{"query_id": "' + b"0" * 36 + b'", "verdict": "up", "comment": "\\u0000"}',
        b"\xff\xfe",
        b'{"question": "' + b"a" * 10 + b'"' + b", " * 3 + b"}",
        b"[" * 100 + b"]" * 100,
    ]
    for body in cases:
        for path in ("/v1/ask", "/v1/feedback", "/v1/nl2cube"):
            r = api.client.post(path, content=body, headers={"Content-Type": "application/json"})
            assert 400 <= r.status_code < 500, (path, body[:40], r.status_code, r.text)
    feedback = {"query_id": "00000000-0000-0000-0000-000000000000", "verdict": "up"}
    deep_json = api.client.post("/v1/feedback", json={**feedback, "corrected_cube_query": _nest(40)})
    assert deep_json.status_code == 400 and "nested" in deep_json.json()["detail"]
    assert api.service.calls == []


def _nest(depth: int) -> dict:
    value: dict = {"measures": ["orders.count"]}
    for _ in range(depth):
        value = {"filters": value}
    return value


def test_shape_problem() -> None:
    assert shape_problem({"a": [1, "b", {"c": None}]}, 4) is None
    assert "nested" in (shape_problem(_nest(10), 5) or "")
    assert "NUL" in (shape_problem({"k\x00": 1}, 5) or "")
    assert "NUL" in (shape_problem([["\x00"]], 5) or "")


def test_keyless_mode_refuses_foreign_hosts_and_cross_site_requests(make_api) -> None:
    rebound = make_api(base_url="http://attacker.example:8088")
    r = rebound.client.post("/v1/ask", json=ASK)
    assert r.status_code == 403 and "Host" in r.json()["detail"]
    assert rebound.client.get("/v1/catalog").status_code == 403
    api = make_api()
    cross = api.client.post("/v1/ask", json=ASK, headers={"Origin": "https://evil.example"})
    assert cross.status_code == 403 and "origin" in cross.json()["detail"]
    assert api.client.post("/v1/ask", json=ASK, headers={"Origin": "null"}).status_code == 403
    assert api.client.post("/v1/ask", json=ASK, headers={"Sec-Fetch-Site": "cross-site"}).status_code == 403
    assert api.service.calls == []
    same = api.client.post("/v1/ask", json=ASK, headers={"Origin": "http://127.0.0.1:8088"})
    assert same.status_code == 200
    assert api.client.post("/v1/ask", json=ASK, headers={"Origin": "http://localhost:3000"}).status_code == 200
    allowed = make_api(
        base_url="http://cubesage.internal",
        api_allowed_hosts=["cubesage.internal"],
        cors_origins=["https://dash.example"],
    )
    assert allowed.client.post("/v1/ask", json=ASK, headers={"Origin": "https://dash.example"}).status_code == 200


def test_keyed_mode_does_not_depend_on_the_host(make_api) -> None:
    api = make_api(tokens={"k1": "cs_k1_t"}, api_host="0.0.0.0", base_url="http://api.example.com")
    r = api.client.post(
        "/v1/ask", json=ASK, headers={"Authorization": "Bearer cs_k1_t", "Origin": "https://app.example.com"}
    )
    assert r.status_code == 200


def test_failed_authentication_is_rate_limited_before_the_key_lookup(make_api) -> None:
    api = make_api(
        tokens={"k1": "cs_k1_good"}, api_require_keys=True, api_auth_failures_per_min=3, api_rate_limit_per_min=0
    )
    codes = [
        api.client.get("/v1/catalog", headers={"Authorization": f"Bearer cs_bad_{i}"}).status_code for i in range(6)
    ]
    assert codes == [401, 401, 401, 429, 429, 429]
    assert api.store.lookups == 3  # the limited attempts never reached the store
    limited = api.client.get("/v1/catalog", headers={"Authorization": "Bearer cs_k1_good"})
    assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
    missing = make_api(api_require_keys=True, api_auth_failures_per_min=2)
    assert [missing.client.get("/v1/catalog").status_code for _ in range(3)] == [401, 401, 429]


def test_invalid_key_is_refused_even_in_keyless_mode(api) -> None:
    r = api.client.post("/v1/ask", json=ASK, headers={"Authorization": "Bearer cs_nope"})
    assert r.status_code == 401


def test_forwarded_for_counts_only_from_trusted_proxies() -> None:
    trusted = (ipaddress.ip_network("10.0.0.0/8"),)
    xff = {"x-forwarded-for": "1.2.3.4, 10.0.0.7"}
    assert client_ip("127.0.0.1", xff, ()) == "127.0.0.1"
    assert client_ip("192.0.2.9", xff, trusted) == "192.0.2.9"  # the peer is no trusted proxy
    assert client_ip("10.0.0.2", xff, trusted) == "1.2.3.4"
    assert client_ip("10.0.0.2", {"x-forwarded-for": "spoofed, 5.6.7.8, 10.0.0.7"}, trusted) == "5.6.7.8"
    assert client_ip("10.0.0.2", {"x-forwarded-for": "garbage"}, trusted) == "10.0.0.2"
    assert client_ip("10.0.0.2", {}, trusted) == "10.0.0.2"


def test_spoofed_forwarded_for_does_not_escape_the_per_address_limit(make_api) -> None:
    api = make_api(api_rate_limit_per_min=2)
    codes = [
        api.client.post("/v1/ask", json=ASK, headers={"X-Forwarded-For": f"198.51.100.{i}"}).status_code
        for i in range(3)
    ]
    assert codes == [200, 200, 429]


def test_host_policy() -> None:
    assert hostname("127.0.0.1:8088") == "127.0.0.1" and hostname("[::1]:80") == "::1"
    assert hostname("LOCALHOST") == "localhost"
    policy = HostPolicy("127.0.0.1")
    assert policy.problem({"host": "127.0.0.2:1"}) is None  # the whole loopback block
    assert policy.problem({"host": "localhost.attacker.example"}) is not None
    assert policy.problem({"host": "127.0.0.1", "origin": "http://[::1]:8088"}) is None
    assert policy.problem({"host": "127.0.0.1", "origin": "file://"}) is not None
