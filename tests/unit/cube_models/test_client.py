"""Cube REST client against an httpx MockTransport: JWT, Continue wait, number conversion, error mapping."""

from __future__ import annotations

import json

import httpx
import jwt
import pytest

from cube_models.client import CubeClient, to_number
from cube_models.errors import (
    CubeAuthError,
    CubeServerError,
    CubeTimeoutError,
    CubeUnavailableError,
    CubeUserError,
)

SECRET = "s" * 32
META = {
    "cubes": [
        {
            "name": "orders",
            "measures": [{"name": "orders.count", "type": "count"}],
            "dimensions": [
                {"name": "orders.status", "type": "string"},
                {"name": "orders.region_id", "type": "number"},
                {"name": "orders.order_ts", "type": "time"},
            ],
        }
    ]
}


def _client(handler, **kw) -> CubeClient:
    return CubeClient("http://cube.test/", SECRET, transport=httpx.MockTransport(handler), backoff_s=0.001, **kw)


def test_load_waits_converts_numbers_and_signs_jwt() -> None:
    calls = {"load": 0}

    def handler(request: httpx.Request) -> httpx.Response:
        claims = jwt.decode(request.headers["Authorization"], SECRET, algorithms=["HS256"])
        assert "exp" in claims
        if request.url.path.endswith("/meta"):
            return httpx.Response(200, json=META)
        calls["load"] += 1
        assert json.loads(request.content)["query"]["measures"] == ["orders.count"]
        if calls["load"] < 3:
            return httpx.Response(200, json={"error": "Continue wait"})
        return httpx.Response(
            200,
            json={
                "data": [
                    {
                        "orders.status": "123",
                        "orders.count": "42",
                        "orders.region_id": "7",
                        "orders.order_ts.month": "2024-01-01T00:00:00.000",
                        "orders.order_ts": "2024-01-01T00:00:00.000",
                    }
                ],
                "annotation": {"measures": {"orders.count": {"type": "number"}}},
            },
        )

    body = _client(handler).load({"measures": ["orders.count"]})
    row = body["data"][0]
    assert calls["load"] == 3
    assert row["orders.count"] == 42 and row["orders.region_id"] == 7
    assert row["orders.status"] == "123"  # a string dimension stays a string
    assert row["orders.order_ts.month"] == "2024-01-01T00:00:00.000"


def test_continue_wait_is_bounded() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=META if request.url.path.endswith("/meta") else {"error": "Continue wait"})

    with pytest.raises(CubeTimeoutError, match="Continue wait"):
        _client(handler, max_wait_s=0.3).load({"measures": ["orders.count"]})


@pytest.mark.parametrize("status,exc", [(400, CubeUserError), (403, CubeAuthError), (500, CubeServerError)])
def test_errors_carry_cubes_message(status: int, exc: type) -> None:
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.url.path)
        return httpx.Response(status, json={"error": f"boom {status}"})

    with pytest.raises(exc, match=f"boom {status}") as info:
        _client(handler, retries=2).meta()
    assert info.value.status == status
    assert len(calls) == (3 if status == 500 else 1)  # only 5xx is retried


def test_server_error_then_success_is_retried() -> None:
    answers = iter([httpx.Response(503, text="busy"), httpx.Response(200, json=META)])
    assert _client(lambda request: next(answers)).meta() == META


def test_connection_refused_and_timeout() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("Connection refused", request=request)

    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    with pytest.raises(CubeUnavailableError, match="cannot reach"):
        _client(refuse).meta()
    with pytest.raises(CubeTimeoutError):
        _client(slow).meta()
    assert _client(refuse).ready() is False


async def test_async_load_and_sql() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/meta"):
            return httpx.Response(200, json=META)
        if request.url.path.endswith("/sql"):
            return httpx.Response(200, json={"sql": {"sql": ["SELECT 1", []]}})
        return httpx.Response(200, json={"data": [{"orders.count": "5"}]})

    client = _client(handler)
    assert (await client.aload({"measures": ["orders.count"]}))["data"] == [{"orders.count": 5}]
    assert (await client.asql({"measures": ["orders.count"]}))["sql"] == ["SELECT 1", []]


def test_to_number() -> None:
    assert to_number("12") == 12 and to_number("-1.50") == -1.5 and to_number("1e3") == 1000.0
    assert to_number("abc") == "abc" and to_number(None) is None and to_number("1.2.3") == "1.2.3"
