"""The configured model's view of the warehouse that SAG indexing and wiki ingestion need (table names,
nouns, entity tables), read over one connection."""

from __future__ import annotations

from cubesage_core import db
from cubesage_core.settings import Settings, get_settings
from sag_index.warehouse import WarehouseMap


def warehouse_map_of(url: str, settings: Settings | None = None) -> WarehouseMap:
    """The configured model's table names, nouns and entity tables (``router.detail.schema.warehouse_map``)."""
    from router.detail.schema import warehouse_map

    with db.connection(url) as conn:
        return warehouse_map(settings or get_settings(), conn)
