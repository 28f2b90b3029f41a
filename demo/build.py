"""Build everything the demo needs, in order, idempotently: warehouse, rollup tables, semantic assets, glossary,
few-shots, the SAG indices and the retrieval calibration. Used by ``cubesage demo load|run`` and by the test session."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from answer.bootstrap import calibrate_on_suite, warehouse_map_of
from cubesage_core import db
from cubesage_core.embeddings import get_embedder
from cubesage_core.settings import Settings
from demo import load as demo_warehouse

Step = Callable[[], Any]
STEPS = ("warehouse", "rollups", "semantic assets", "glossary", "few-shots", "SAG indices", "retrieval calibration")


@dataclass
class BootstrapReport:
    timings_s: dict[str, float] = field(default_factory=dict)
    results: dict[str, Any] = field(default_factory=dict)


def prepare_demo(
    settings: Settings,
    url: str,
    *,
    scale: float = 1.0,
    reload_warehouse: bool = True,
    on_step: Callable[[str], None] | None = None,
) -> BootstrapReport:
    """Run the build steps; the warehouse is regenerated only when asked or missing. The retrieval thresholds
    are fitted on the demo suite's ``dev`` split (``answer.calibration``)."""
    from cube_models import rollups
    from cube_models.export import export_assets
    from cube_models.model import load_model
    from fourengine.fewshot_cache import load_few_shots
    from fourengine.glossary import load_glossary
    from sag_index.backends import get_store
    from sag_index.warehouse import index_warehouse

    db.apply_schema(url)
    embedder = get_embedder(settings.embedding_backend)
    demo = settings.demo_dir
    steps: dict[str, Step] = {
        "warehouse": lambda: (
            demo_warehouse.load(url, scale=scale, demo_dir=demo)
            if reload_warehouse or not demo_warehouse.loaded(url)
            else "kept"
        ),
        "rollups": lambda: [
            b.as_dict()
            for b in rollups.refresh(url, load_model(settings.model_folder()), tuple(settings.warehouse_schemas))
        ],
        "semantic assets": lambda: export_assets(url, load_model(settings.model_folder()), embedder=embedder),
        "glossary": lambda: load_glossary(url, demo / "glossary.yaml", embedder=embedder),
        "few-shots": lambda: load_few_shots(url, demo / "few_shots.yaml", embedder=embedder),
        "SAG indices": lambda: index_warehouse(
            url, warehouse_map_of(url, settings), demo / "wiki", store=get_store(settings, url)
        ),
        "retrieval calibration": lambda: calibrate_on_suite(url, demo / "regress" / "suite.yaml", embedder),
    }
    report = BootstrapReport()
    for name in STEPS:
        started = time.monotonic()
        report.results[name] = steps[name]()
        report.timings_s[name] = round(time.monotonic() - started, 2)
        if on_step is not None:
            on_step(name)
    return report
