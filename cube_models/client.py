"""Cube REST client (httpx, sync and async): /v1/load, /v1/sql, /v1/meta, /readyz.

HS256 JWT from the configured secret; HTTP 200 ``{"error": "Continue wait"}`` re-sent until a
bounded total wait; numeric strings turned into numbers using /v1/meta member types; Cube's
errors mapped to typed exceptions carrying Cube's message. Every call is a read, so connection
failures and 5xx are retried with exponential backoff (bounded); timeouts are not retried.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
import jwt

from cube_models.errors import (
    CubeAuthError,
    CubeError,
    CubeServerError,
    CubeTimeoutError,
    CubeUnavailableError,
    CubeUserError,
)

API = "/cubejs-api/v1"
_INT_RE = re.compile(r"^-?\d+$")
_NUM_RE = re.compile(r"^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


def to_number(value: Any) -> Any:
    """``"12"`` -> 12, ``"1.50"`` -> 1.5; anything else unchanged."""
    if isinstance(value, str):
        if _INT_RE.match(value):
            return int(value)
        if _NUM_RE.match(value):
            return float(value)
    return value


def convert_rows(rows: list[dict[str, Any]], numeric: set[str]) -> list[dict[str, Any]]:
    return [
        {k: to_number(v) if k in numeric or k.rsplit(".", 1)[0] in numeric else v for k, v in r.items()} for r in rows
    ]


def _error_text(resp: httpx.Response) -> str:
    try:
        body = resp.json()
    except ValueError:
        return resp.text[:500] or resp.reason_phrase
    if isinstance(body, dict):
        return str(body.get("error") or body.get("message") or body)[:2000]
    return str(body)[:2000]


def raise_for(resp: httpx.Response) -> None:
    if resp.status_code < 400:
        return
    text = _error_text(resp)
    if resp.status_code == 400:
        raise CubeUserError(text, 400)
    if resp.status_code in (401, 403):
        raise CubeAuthError(text, resp.status_code)
    if resp.status_code >= 500:
        raise CubeServerError(text, resp.status_code)
    raise CubeError(text, resp.status_code)


@dataclass
class CubeClient:
    """One Cube deployment. ``max_wait_s`` bounds the 'Continue wait' loop; ``retries`` bounds retries."""

    url: str
    secret: str
    timeout_s: float = 30.0
    max_wait_s: float = 60.0
    retries: int = 2
    backoff_s: float = 0.2
    transport: httpx.BaseTransport | httpx.AsyncBaseTransport | None = field(default=None, repr=False)
    _types: dict[str, str] | None = field(default=None, repr=False)
    _sync: httpx.Client | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.url = self.url.rstrip("/")

    # ---- shared -------------------------------------------------------------------------
    def token(self) -> str:
        now = int(time.time())
        return jwt.encode({"iat": now, "exp": now + 3600}, self.secret, algorithm="HS256")

    def _headers(self) -> dict[str, str]:
        return {"Authorization": self.token(), "Content-Type": "application/json"}

    def _numeric(self, body: dict[str, Any]) -> set[str]:
        types = dict(self._types or {})
        for group in ("measures", "dimensions", "timeDimensions"):
            for key, info in (body.get("annotation", {}).get(group) or {}).items():
                types.setdefault(key, info.get("type", ""))
        return {k for k, t in types.items() if t == "number"}

    def _finish_load(self, body: dict[str, Any]) -> dict[str, Any]:
        body = dict(body)
        body["data"] = convert_rows(body.get("data") or [], self._numeric(body))
        return body

    @staticmethod
    def _meta_types(meta: dict[str, Any]) -> dict[str, str]:
        types: dict[str, str] = {}
        for cube in meta.get("cubes", []):
            for group in ("measures", "dimensions"):
                for member in cube.get(group, []):
                    types[member["name"]] = "number" if group == "measures" else member.get("type", "")
        return types

    # ---- sync -----------------------------------------------------------------------------
    def _client(self) -> httpx.Client:
        if self._sync is None:
            self._sync = httpx.Client(timeout=self.timeout_s, transport=self.transport)  # type: ignore[arg-type]
        return self._sync

    def close(self) -> None:
        if self._sync is not None:
            self._sync.close()
            self._sync = None

    def _failure(self, exc: httpx.TransportError | CubeServerError) -> CubeError:
        """The typed error of a failed request; a timeout is raised at once (not retried)."""
        if isinstance(exc, httpx.TimeoutException):
            raise CubeTimeoutError(f"no answer from {self.url} in {self.timeout_s}s ({exc})") from exc
        if isinstance(exc, httpx.TransportError):
            return CubeUnavailableError(f"cannot reach {self.url}: {exc}")
        return exc

    def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        attempt = 0
        while True:
            try:
                resp = self._client().request(method, f"{self.url}{path}", headers=self._headers(), **kwargs)
                raise_for(resp)
                return resp
            except (httpx.TransportError, CubeServerError) as exc:
                error = self._failure(exc)
                if attempt >= self.retries:
                    raise error from exc
            time.sleep(self.backoff_s * 2**attempt)
            attempt += 1

    def _waiting(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        deadline = time.monotonic() + self.max_wait_s
        delay = 0.05
        while True:
            body: dict[str, Any] = self._send(method, path, **kwargs).json()
            if not (isinstance(body, dict) and body.get("error") == "Continue wait"):
                return body
            if time.monotonic() + delay > deadline:
                raise CubeTimeoutError(f"Cube kept answering 'Continue wait' for {self.max_wait_s}s")
            time.sleep(delay)
            delay = min(delay * 2, 1.0)

    def meta(self) -> dict[str, Any]:
        body = self._waiting("GET", f"{API}/meta")
        self._types = self._meta_types(body)
        return body

    def load(self, query: dict[str, Any]) -> dict[str, Any]:
        """POST /v1/load; returns Cube's body with ``data`` rows' numbers as Python numbers."""
        if self._types is None:
            self.meta()
        return self._finish_load(self._waiting("POST", f"{API}/load", content=json.dumps({"query": query})))

    def sql(self, query: dict[str, Any]) -> dict[str, Any]:
        """GET /v1/sql: ``{"sql": [text, params], ...}`` as Cube returns it under ``sql``."""
        sql: dict[str, Any] = self._waiting("GET", f"{API}/sql", params={"query": json.dumps(query)})["sql"]
        return sql

    def ready(self) -> bool:
        try:
            return self._client().get(f"{self.url}/readyz", timeout=min(self.timeout_s, 5)).status_code == 200
        except httpx.HTTPError:
            return False

    # ---- async ----------------------------------------------------------------------------
    async def _asend(self, client: httpx.AsyncClient, method: str, path: str, **kwargs: Any) -> httpx.Response:
        attempt = 0
        while True:
            try:
                resp = await client.request(method, f"{self.url}{path}", headers=self._headers(), **kwargs)
                raise_for(resp)
                return resp
            except (httpx.TransportError, CubeServerError) as exc:
                error = self._failure(exc)
                if attempt >= self.retries:
                    raise error from exc
            await asyncio.sleep(self.backoff_s * 2**attempt)
            attempt += 1

    async def _awaiting(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        deadline = time.monotonic() + self.max_wait_s
        delay = 0.05
        async with httpx.AsyncClient(timeout=self.timeout_s, transport=self.transport) as client:  # type: ignore[arg-type]
            while True:
                body: dict[str, Any] = (await self._asend(client, method, path, **kwargs)).json()
                if not (isinstance(body, dict) and body.get("error") == "Continue wait"):
                    return body
                if time.monotonic() + delay > deadline:
                    raise CubeTimeoutError(f"Cube kept answering 'Continue wait' for {self.max_wait_s}s")
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)

    async def ameta(self) -> dict[str, Any]:
        body = await self._awaiting("GET", f"{API}/meta")
        self._types = self._meta_types(body)
        return body

    async def aload(self, query: dict[str, Any]) -> dict[str, Any]:
        if self._types is None:
            await self.ameta()
        return self._finish_load(await self._awaiting("POST", f"{API}/load", content=json.dumps({"query": query})))

    async def asql(self, query: dict[str, Any]) -> dict[str, Any]:
        sql: dict[str, Any] = (await self._awaiting("GET", f"{API}/sql", params={"query": json.dumps(query)}))["sql"]
        return sql

    async def aready(self) -> bool:
        try:
            async with httpx.AsyncClient(timeout=min(self.timeout_s, 5), transport=self.transport) as client:  # type: ignore[arg-type]
                return (await client.get(f"{self.url}/readyz")).status_code == 200
        except httpx.HTTPError:
            return False
