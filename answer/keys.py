"""API keys: create (the token is printed once), list, revoke, change scopes; only sha256(token) is stored.

A token looks like ``cs_<key_id>_<secret>``; ``key_id`` is public (shown by ``list``
and recorded in the audit log), the secret is 32 random url-safe bytes. Each key has scopes:
``ask`` (questions, catalog, stored queries, feedback proposals), ``ingest`` (``/v1/ingest/*``) and
``admin`` (everything, including approving feedback proposals).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from cubesage_core import db

TOKEN_PREFIX = "cs_"
SCOPES = ("ask", "ingest", "admin")
DEFAULT_SCOPES = ("ask",)
_COLUMNS = "key_id, name, created_at, revoked_at, last_used_at, scopes"


class UnknownKey(LookupError):
    """No active key matches the given name or id."""


@dataclass(frozen=True)
class ApiKey:
    key_id: str
    name: str
    created_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None
    scopes: tuple[str, ...] = DEFAULT_SCOPES


@dataclass(frozen=True)
class KeyGrant:
    """What an authenticated request may do: the key's id and scopes."""

    key_id: str
    scopes: frozenset[str]

    def allows(self, scope: str) -> bool:
        return has_scope(self.scopes, scope)


def has_scope(scopes: Iterable[str], needed: str) -> bool:
    """``admin`` holds every scope; the others only themselves."""
    held = set(scopes)
    return needed in held or "admin" in held


def check_scopes(scopes: Iterable[str]) -> tuple[str, ...]:
    """The scopes in canonical order; ``ValueError`` naming an unknown one or an empty list."""
    wanted = {s.strip().lower() for s in scopes if s.strip()}
    unknown = sorted(wanted - set(SCOPES))
    if unknown:
        raise ValueError(f"unknown scope(s) {', '.join(unknown)}; known: {', '.join(SCOPES)}")
    if not wanted:
        raise ValueError(f"a key needs at least one scope ({', '.join(SCOPES)})")
    return tuple(s for s in SCOPES if s in wanted)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> tuple[str, str]:
    """A fresh (key_id, token) pair."""
    key_id = secrets.token_hex(4)
    return key_id, f"{TOKEN_PREFIX}{key_id}_{secrets.token_urlsafe(32)}"


def _key(row: tuple) -> ApiKey:
    key_id, name, created_at, revoked_at, last_used_at, scopes = row[:6]
    return ApiKey(key_id, name, created_at, revoked_at, last_used_at, scopes=tuple(scopes))


def create_key(url: str, name: str, scopes: Iterable[str] = DEFAULT_SCOPES) -> tuple[ApiKey, str]:
    """Create an active key named ``name`` with ``scopes``; returns it and the token (never stored in clear)."""
    name = name.strip()
    if not name or len(name) > 100:
        raise ValueError("a key name must be 1..100 characters")
    granted = check_scopes(scopes)
    key_id, token = new_token()
    with db.connection(url) as conn:
        exists = conn.execute(
            "SELECT 1 FROM semlayer.api_key WHERE name = %s AND revoked_at IS NULL", (name,)
        ).fetchone()
        if exists:
            raise ValueError(f"an active key named {name!r} already exists; revoke it first")
        row = conn.execute(
            f"INSERT INTO semlayer.api_key (key_id, name, token_sha256, scopes) VALUES (%s, %s, %s, %s) "
            f"RETURNING {_COLUMNS}",
            (key_id, name, hash_token(token), list(granted)),
        ).fetchone()
    return _key(db.one(row)), token


def list_keys(url: str, include_revoked: bool = False) -> list[ApiKey]:
    where = "" if include_revoked else "WHERE revoked_at IS NULL"
    with db.connection(url) as conn:
        rows = conn.execute(f"SELECT {_COLUMNS} FROM semlayer.api_key {where} ORDER BY created_at").fetchall()
    return [_key(row) for row in rows]


def set_scopes(url: str, name_or_id: str, scopes: Iterable[str]) -> ApiKey:
    """Replace the scopes of an active key (running servers see it within seconds)."""
    granted = check_scopes(scopes)
    with db.connection(url) as conn:
        row = conn.execute(
            f"UPDATE semlayer.api_key SET scopes = %s WHERE (key_id = %s OR name = %s) AND revoked_at IS NULL "
            f"RETURNING {_COLUMNS}",
            (list(granted), name_or_id, name_or_id),
        ).fetchone()
    if row is None:
        raise UnknownKey(f"no active API key with name or id {name_or_id!r}")
    return _key(row)


def revoke_key(url: str, name_or_id: str) -> ApiKey:
    with db.connection(url) as conn:
        row = conn.execute(
            "UPDATE semlayer.api_key SET revoked_at = now() "
            "WHERE (key_id = %s OR name = %s) AND revoked_at IS NULL "
            f"RETURNING {_COLUMNS}",
            (name_or_id, name_or_id),
        ).fetchone()
    if row is None:
        raise UnknownKey(f"no active API key with name or id {name_or_id!r}")
    return _key(row)
