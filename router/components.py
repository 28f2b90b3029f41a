"""The pipeline's moving parts behind one small interface, wired to the real packages by ``load_components``.

Query understanding, decomposition, intent and the aggregate path live in ``router``; retrieval in
``fourengine``; table/row recall in ``sag_index``; the Cube model and backends in ``cube_models``.
Tests pass small fakes with the same call shapes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any

from router.detail.entities import EntityMatch


@dataclass
class Components:
    understand: Callable[[str, date], Any]
    decompose: Callable[[Any], list[Any]]
    retrieve: Callable[[Any, list[Any]], tuple[dict[str, Any], list[dict[str, Any]]]]
    recall_tables: Callable[[str], list[Any]]
    recall_rows: Callable[[str], list[Any]]
    signals: Callable[[Any, dict[str, Any], list[EntityMatch], list[Any]], Any]
    classify_intent: Callable[[Any, Any], Any]
    aggregate: Callable[[Any, dict[str, Any], date, bool | None], Any]
    close: Callable[[], None] = lambda: None


def load_components(settings: Any, url: str) -> Components:
    """The real components over the database at ``url`` (startup cost paid here, once)."""
    from cube_models.backends import get_backend
    from cube_models.model import load_model
    from fourengine.retrieve import Retriever
    from router.aggregate import run_aggregate
    from router.decompose import decompose, rrf_fuse
    from router.intent import classify_intent
    from router.signals import intent_signals
    from router.understanding import understand
    from sag_index.backends import get_store
    from sag_index.recall import SagRecall

    retriever = Retriever(url)
    sag = SagRecall(url, get_store(settings, url), settings)
    model = load_model(settings.model_dir)
    backend = get_backend(settings, url, model)

    def retrieve(understanding: Any, sub_queries: list[Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        main = retriever.retrieve_sync(understanding.normalized, understanding.search_terms)
        results = [main]
        for sub in sub_queries if len(sub_queries) > 1 else []:
            results.append(retriever.retrieve_sync(_text(sub), getattr(sub, "search_terms", None)))
        fused = rrf_fuse([[a.asset.asset_id for a in r.assets] for r in results])
        return {"result": main, "results": results}, [{"id": i, "score": round(s, 5)} for i, s in fused]

    def aggregate(understanding: Any, retrieval: dict[str, Any], today: date, use_llm: bool | None) -> Any:
        return run_aggregate(understanding, retrieval["result"], model, backend, today=today)

    return Components(
        understand=understand, decompose=decompose, retrieve=retrieve,
        recall_tables=sag.recall_tables, recall_rows=sag.recall_rows,
        signals=intent_signals, classify_intent=classify_intent, aggregate=aggregate,
        close=retriever.close,
    )


def _text(sub: Any) -> str:
    return sub if isinstance(sub, str) else str(getattr(sub, "text", sub))
