"""What each retrieval engine contributes, and how CRAG grades, per split of a regression suite.

For every question the retrieval runs as the answering path runs it (query understanding, RAG-Fusion
sub-queries, the four engines with wiki passages for corrective retrieval, fusion, token budget). An
engine *contributes* to a question when an asset it found ends in the final (budgeted, fused) context:
R (terms), V (vectors), D (a few-shot in the context), G (tables the join graph added), W (tables wiki
passages named), binding (rules pulled in by a binding); ``assets_per_question``: how many context assets
each engine found, on average. One line per split and threshold set: ``seed``
(the seed's fixed cosines) and ``calibrated`` (``fourengine.calibration``, as stored with the index).
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

from answer.regress import load_suite
from cubesage_core.settings import REPO_ROOT

DEFAULT_SUITE = REPO_ROOT / "demo" / "regress" / "suite.yaml"
ENGINES = ("R", "V", "D", "G", "W", "binding")


def contributions(result: Any) -> set[str]:
    """The engines with an asset in ``result``'s rendered context."""
    included = set(result.context.included)
    found = {source for ranked in result.assets if ranked.asset.asset_id in included for source in ranked.sources}
    if any(ref.startswith("few_shot:") for ref in included):
        found.add("D")
    return found & set(ENGINES)


def _retrieve(retriever: Any, settings: Any, question: str, today: date) -> Any:
    from fourengine.fusion import fuse
    from router.decompose import decompose
    from router.understanding import understand

    u = understand(question, today, use_llm=False)
    subs = [s for s in decompose(u, use_llm=False) if s.text != u.normalized]
    main = retriever.retrieve_sync(u.normalized, u.search_terms)
    others = [retriever.retrieve_sync(s.text, s.search_terms or None) for s in subs] if len(subs) > 1 else []
    return fuse(main, others, settings)


def context_assets(result: Any) -> Counter[str]:
    """How many assets of ``result``'s rendered context each engine found (an asset counts for each)."""
    included = set(result.context.included)
    return Counter(
        source
        for ranked in result.assets
        if ranked.asset.asset_id in included
        for source in ranked.sources
        if source in ENGINES
    )


def _line(split: str, thresholds: str, results: list[Any]) -> dict[str, Any]:
    n = len(results)
    share = Counter(e for r in results for e in contributions(r))
    assets = sum((context_assets(r) for r in results), Counter())
    grades = Counter(r.crag.grade for r in results)
    final = Counter(r.crag.final for r in results)
    decisions = Counter(r.crag.decision for r in results)
    top = [r.crag.top_score for r in results]
    return {
        "bench": "engines",
        "split": split,
        "thresholds": thresholds,
        "n": n,
        "share": {e: round(share[e] / n, 3) if n else None for e in ENGINES},
        "assets_per_question": {e: round(assets[e] / n, 2) if n else None for e in ENGINES if e != "D"},
        "crag": dict(sorted(grades.items())),
        "crag_final": dict(sorted(final.items())),
        "decisions": dict(sorted(decisions.items())),
        "top_score_p50": round(statistics.median(top), 4) if top else None,
        "applied": results[0].crag.thresholds if results else {},
    }


def run(suite: Path | None = None) -> list[dict[str, Any]]:
    from cubesage_core import db
    from cubesage_core.embeddings import get_embedder
    from cubesage_core.settings import get_settings
    from fourengine.retrieve import Retriever
    from fourengine.settings import RetrievalSettings
    from router.schema_retrieval import WikiPassages
    from sag_index.recall import SagRecall

    settings = get_settings()
    url = db.database_url(settings)
    spec = load_suite(suite or DEFAULT_SUITE)
    today = spec.today or date.today()
    sag = SagRecall(url)
    lines = []
    try:
        for name, knobs in (("seed", RetrievalSettings(calibrated=False)), ("calibrated", RetrievalSettings())):
            retriever = Retriever(url, knobs, embedder=get_embedder(), passages=WikiPassages(sag))
            try:
                for split in ("dev", "test"):
                    cases = spec.select(split).cases
                    line = _line(split, name, [_retrieve(retriever, knobs, c.question, today) for c in cases])
                    print(json.dumps(line, ensure_ascii=False), flush=True)
                    lines.append(line)
            finally:
                retriever.close()
    finally:
        sag.close()
    return lines
