"""Row -> Asset mapping shared by the engines (SQL select lists and their reader)."""

from __future__ import annotations

from typing import Any

from fourengine.models import Asset

ASSET_COLUMNS = "a.asset_id, a.asset_type, a.name, a.title, a.description, a.parent_id, a.certified, a.meta"


def asset_from(row: tuple[Any, ...], start: int = 0) -> Asset:
    asset_id, asset_type, name, title, description, parent_id, certified, meta = row[start : start + 8]
    return Asset(asset_id, asset_type, name, title or "", description or "", parent_id, bool(certified), meta or {})
