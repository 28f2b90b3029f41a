"""API keys: create (the token is printed once), list, revoke; only sha256(token) is stored.

A token looks like ``cs_<key_id>_<secret>``; ``key_id`` is public (shown by ``list``
and recorded in the audit log), the secret is 32 random url-safe bytes.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime

from cubesage_core import db

TOKEN_PREFIX = "cs_"


class UnknownKey(LookupError):
    """No active key matches the given name or id."""


@dataclass(frozen=True)
class ApiKey:
    key_id: str
    name: str
    created_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> tuple[str, str]:
    """A fresh (key_id, token) pair."""
    key_id = secrets.token_hex(4)
    return key_id, f"{TOKEN_PREFIX}{key_id}_{secrets.token_urlsafe(32)}"


def create_key(url: str, name: str) -> tuple[ApiKey, str]:
    """Create an active key named ``name``; returns it and the token (never stored in clear)."""
    name = name.strip()
    if not name or len(name) > 100:
        raise ValueError("a key name must be 1..100 characters")
    key_id, token = new_token()
    with db.connection(url) as conn:
        exists = conn.execute(
            "SELECT 1 FROM semlayer.api_key WHERE name = %s AND revoked_at IS NULL", (name,)
        ).fetchone()
        if exists:
            raise ValueError(f"an active key named {name!r} already exists; revoke it first")
        row = conn.execute(
            "INSERT INTO semlayer.api_key (key_id, name, token_sha256) VALUES (%s, %s, %s) "
            "RETURNING key_id, name, created_at, revoked_at, last_used_at",
            (key_id, name, hash_token(token)),
        ).fetchone()
    return ApiKey(*row), token


def list_keys(url: str, include_revoked: bool = False) -> list[ApiKey]:
    where = "" if include_revoked else "WHERE revoked_at IS NULL"
    with db.connection(url) as conn:
        rows = conn.execute(
            f"SELECT key_id, name, created_at, revoked_at, last_used_at FROM semlayer.api_key {where} "
            "ORDER BY created_at"
        ).fetchall()
    return [ApiKey(*row) for row in rows]


def revoke_key(url: str, name_or_id: str) -> ApiKey:
    with db.connection(url) as conn:
        row = conn.execute(
            "UPDATE semlayer.api_key SET revoked_at = now() "
            "WHERE (key_id = %s OR name = %s) AND revoked_at IS NULL "
            "RETURNING key_id, name, created_at, revoked_at, last_used_at",
            (name_or_id, name_or_id),
        ).fetchone()
    if row is None:
        raise UnknownKey(f"no active API key with name or id {name_or_id!r}")
    return ApiKey(*row)
