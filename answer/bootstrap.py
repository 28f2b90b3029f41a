"""The configured model's view of the warehouse that SAG indexing and wiki ingestion need (table names,
nouns, entity tables), read over one connection; and the retrieval calibration fitted on a suite."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cubesage_core import db
from cubesage_core.settings import Settings, get_settings
from sag_index.warehouse import WarehouseMap


def warehouse_map_of(url: str, settings: Settings | None = None) -> WarehouseMap:
    """The configured model's table names, nouns and entity tables (``router.detail.schema.warehouse_map``)."""
    from router.detail.schema import warehouse_map

    with db.connection(url) as conn:
        return warehouse_map(settings or get_settings(), conn)


def calibrate_on_suite(url: str, suite: Path | None, embedder: Any) -> dict[str, float]:
    """Fit the retrieval thresholds on the suite's dev questions (no such file: on the stored labelled
    questions and the index's own samples, when the stored calibration is not current)."""
    from answer.calibration import suite_samples
    from fourengine.calibration import ensure

    with db.connection(url) as conn:
        calibration, _ = ensure(conn, embedder, suite_samples(suite) if suite is not None and suite.exists() else None)
    return calibration.thresholds()
