"""API keys, scopes, rate limits and request checks, applied as a Litestar guard on every ``/v1`` route.

Keys are sent as ``Authorization: Bearer <token>`` or ``X-API-Key: <token>``.
They are required unless the server binds a loopback address in demo mode
(``Settings.api_require_keys`` None = auto); in that keyless mode the ``Host`` and ``Origin``
headers must be local (:mod:`answer.api.origin`), questions need no key, and ``/v1/ingest/*`` still
needs a key with the ingest scope unless ``api_ingest_requires_key`` is false. A route names its scope
in ``opt={"scope": ...}`` (default ``ask``; :mod:`answer.keys`). Each key (or each client address when no
key is sent) has a token bucket of ``api_rate_limit_per_min`` requests per minute (0 = unlimited);
failed authentications have their own bucket per address (``api_auth_failures_per_min``), checked
before the key is looked up. An empty bucket answers 429 with ``Retry-After``. The client address is
the socket's peer unless that peer is one of ``api_trusted_proxies``; then it is the last address in
``X-Forwarded-For`` that is not a trusted proxy. Bodies must be JSON of a sane shape
(:mod:`answer.api.body`).
"""

from __future__ import annotations

import ipaddress
import math
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from litestar import Request
from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler

from answer.api.body import check_body
from answer.api.errors import Forbidden, RateLimited, Unauthorized
from answer.keys import KeyGrant
from cubesage_core.settings import Settings

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def is_loopback(host: str) -> bool:
    if host in {"localhost", ""}:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def keys_required(settings: Settings) -> bool:
    if settings.api_require_keys is not None:
        return settings.api_require_keys
    return not is_loopback(settings.api_host)


class TokenBuckets:
    """One token bucket per caller: ``per_min`` capacity, refilled continuously."""

    def __init__(self, per_min: int, max_callers: int = 100_000) -> None:
        self.per_min = per_min
        self.rate = per_min / 60.0
        self.max_callers = max_callers
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def _tokens(self, caller: str, now: float) -> float:
        tokens, last = self._buckets.get(caller, (float(self.per_min), now))
        return min(float(self.per_min), tokens + (now - last) * self.rate)

    def wait_s(self, caller: str) -> float:
        """Seconds until ``caller`` has a token (0 = one is available); takes nothing."""
        if self.per_min <= 0:
            return 0.0
        with self._lock:
            tokens = self._tokens(caller, time.monotonic())
        return 0.0 if tokens >= 1.0 else (1.0 - tokens) / self.rate

    def take(self, caller: str) -> float:
        """Take one token; returns 0 when allowed, else the seconds until a token is available."""
        if self.per_min <= 0:
            return 0.0
        now = time.monotonic()
        with self._lock:
            tokens = self._tokens(caller, now)
            if tokens < 1.0:
                self._buckets[caller] = (tokens, now)
                return (1.0 - tokens) / self.rate
            if len(self._buckets) >= self.max_callers and caller not in self._buckets:
                self._buckets.clear()
            self._buckets[caller] = (tokens - 1.0, now)
            return 0.0


def trusted_networks(settings: Settings) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(p, strict=False) for p in settings.api_trusted_proxies)


def _within(address: str, networks: Sequence[Network]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in net for net in networks)


def client_ip(peer: str | None, headers: Mapping[str, str], trusted: Sequence[Network]) -> str:
    """The client's address: the socket peer, unless the peer is a trusted proxy (see the module doc)."""
    address = peer or "?"
    if not trusted or not _within(address, trusted):
        return address
    hops = [h.strip() for h in headers.get("x-forwarded-for", "").split(",") if h.strip()]
    for hop in reversed(hops):
        if not _is_ip(hop):
            return address  # a malformed hop: the last proxy we trust is the best we know
        if not _within(hop, trusted):
            return hop
        address = hop
    return address


def _is_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def _token_of(connection: ASGIConnection) -> str | None:
    auth = connection.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip() or None
    return connection.headers.get("x-api-key") or None


def _limited(buckets: TokenBuckets, caller: str, what: str) -> None:
    wait_s = buckets.take(caller)
    if wait_s > 0:
        raise RateLimited(f"{what} of {buckets.per_min}/min exceeded", retry_after_s=max(1, math.ceil(wait_s)))


async def _authenticate(connection: ASGIConnection, state: Any, ip: str) -> KeyGrant | None:
    """The key's grant, None for a keyless request where keys are optional; failures use the address's
    failed-authentication bucket (an empty one answers 429 without touching the database)."""
    failures: TokenBuckets = state.auth_failures
    token = _token_of(connection)
    if token is None and not state.require_keys:
        return None
    wait_s = failures.wait_s(f"ip:{ip}")
    if wait_s > 0:
        raise RateLimited(
            f"too many failed authentications from this address ({failures.per_min}/min)",
            retry_after_s=max(1, math.ceil(wait_s)),
        )
    grant = await state.store.key_for(token) if token is not None else None
    if grant is None:
        failures.take(f"ip:{ip}")
        raise (
            Unauthorized("invalid or revoked API key")
            if token is not None
            else Unauthorized(
                "an API key is required: send 'Authorization: Bearer <token>' "
                "(create one with 'cubesage keys create --name NAME')"
            )
        )
    return grant


def _authorize(grant: KeyGrant | None, scope: str, settings: Settings) -> None:
    if grant is None:
        if scope == "ask" or (scope == "ingest" and not settings.api_ingest_requires_key):
            return
        raise Unauthorized(
            f"this route needs an API key with the '{scope}' scope (cubesage keys create --name NAME --scope {scope})"
        )
    if not grant.allows(scope):
        raise Forbidden(f"API key {grant.key_id} lacks the '{scope}' scope (cubesage keys scopes)")


async def api_guard(connection: ASGIConnection, handler: BaseRouteHandler) -> None:
    """Host/Origin (keyless mode), authentication, scope, rate limit and body checks; records the key id
    and the client address on ``connection.state``."""
    state = connection.app.state
    settings: Settings = state.settings
    client = connection.scope.get("client")
    ip = client_ip(client[0] if client else None, connection.headers, state.trusted_proxies)
    if not state.require_keys and (problem := state.host_policy.problem(connection.headers)):
        raise Forbidden(problem)
    grant = await _authenticate(connection, state, ip)
    _authorize(grant, handler.opt.get("scope", "ask"), settings)
    connection.state.api_key_id = grant.key_id if grant else None
    connection.state.client_ip = ip
    _limited(state.buckets, f"key:{grant.key_id}" if grant else f"ip:{ip}", "rate limit")
    if isinstance(connection, Request):
        await check_body(
            connection, expects_data=handler.parsed_data_field is not None, max_depth=settings.api_max_json_depth
        )
