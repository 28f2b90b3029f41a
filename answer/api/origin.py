"""Host and Origin checks for keyless loopback mode: no DNS rebinding, no cross-site requests.

Without API keys the loopback address is the only credential, and a browser will send requests
there for any web page: a rebound DNS name arrives with a foreign ``Host``, a cross-site form or
``fetch`` with a foreign ``Origin`` (or ``Sec-Fetch-Site: cross-site``). Both are refused with 403;
loopback names, the bound host, ``api_allowed_hosts`` and ``cors_origins`` are accepted.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def _is_loopback_name(name: str) -> bool:
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def hostname(host_header: str) -> str:
    """The name of a ``Host`` header value (port and IPv6 brackets removed, lower case)."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class HostPolicy:
    """Which ``Host`` names and ``Origin`` values a keyless server accepts."""

    def __init__(self, bound_host: str, allowed_hosts: Iterable[str] = (), cors_origins: Iterable[str] = ()):
        self.names = {hostname(h) for h in (bound_host, *allowed_hosts) if h}
        self.origins = {o.rstrip("/").lower() for o in cors_origins}

    def allows_name(self, name: str) -> bool:
        return name in self.names or _is_loopback_name(name)

    def problem(self, headers: Mapping[str, str]) -> str | None:
        """Why a request with these headers is refused, or None."""
        host = headers.get("host", "")
        if not self.allows_name(hostname(host)):
            return f"Host {host!r} is not served: without API keys only loopback names are accepted"
        origin = headers.get("origin")
        if origin is None:
            if headers.get("sec-fetch-site", "") == "cross-site":
                return "cross-site requests are refused without API keys"
            return None
        if origin.rstrip("/").lower() in self.origins:
            return None
        parts = urlsplit(origin)
        if parts.scheme in ("http", "https") and parts.hostname and self.allows_name(parts.hostname.lower()):
            return None
        return f"requests from origin {origin!r} are refused without API keys (add it to cors_origins)"
