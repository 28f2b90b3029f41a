"""API keys and per-key rate limits, applied as a Litestar guard on every ``/v1`` route.

Keys are sent as ``Authorization: Bearer <token>`` or ``X-API-Key: <token>``.
They are required unless the server binds a loopback address in demo mode
(``Settings.api_require_keys`` None = auto). Each key (or each client address when
keys are not required) has a token bucket of ``api_rate_limit_per_min`` requests
per minute (0 = unlimited); an empty bucket answers 429 with ``Retry-After``.
"""

from __future__ import annotations

import ipaddress
import math
import threading
import time

from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler

from answer.api.errors import RateLimited, Unauthorized
from cubesage_core.settings import Settings


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

    def take(self, caller: str) -> float:
        """Take one token; returns 0 when allowed, else the seconds until a token is available."""
        if self.per_min <= 0:
            return 0.0
        now = time.monotonic()
        with self._lock:
            tokens, last = self._buckets.get(caller, (float(self.per_min), now))
            tokens = min(float(self.per_min), tokens + (now - last) * self.rate)
            if tokens < 1.0:
                self._buckets[caller] = (tokens, now)
                return (1.0 - tokens) / self.rate
            if len(self._buckets) >= self.max_callers and caller not in self._buckets:
                self._buckets.clear()
            self._buckets[caller] = (tokens - 1.0, now)
            return 0.0


def _token_of(connection: ASGIConnection) -> str | None:
    auth = connection.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip() or None
    return connection.headers.get("x-api-key") or None


async def api_guard(connection: ASGIConnection, _: BaseRouteHandler) -> None:
    """Authenticate (when required) and rate-limit; records the key id on ``connection.state``."""
    app_state = connection.app.state
    token = _token_of(connection)
    key_id: str | None = None
    if token is not None:
        key_id = await app_state.store.key_id_for(token)
        if key_id is None and app_state.require_keys:
            raise Unauthorized("invalid or revoked API key")
    elif app_state.require_keys:
        raise Unauthorized("an API key is required: send 'Authorization: Bearer <token>' "
                           "(create one with 'cubesage keys create --name NAME')")
    connection.state.api_key_id = key_id
    caller = f"key:{key_id}" if key_id else f"ip:{connection.client.host if connection.client else '?'}"
    wait_s = app_state.buckets.take(caller)
    if wait_s > 0:
        raise RateLimited(f"rate limit of {app_state.buckets.per_min} requests/min exceeded",
                          retry_after_s=max(1, math.ceil(wait_s)))
