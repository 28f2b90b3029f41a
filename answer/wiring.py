"""The composition root: the real components of the pipeline over one database (``router.components``).

``load_components(settings, url)`` builds the SAG recall, the embedder (with fitted retrieval thresholds),
fourengine's retriever, the current Cube model's layer and the model-bound paths, and wires them into
:class:`router.components.Components`; it also owns their lifecycle (refresh after an ingest, close).
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor

import psycopg

from cube_models.backends import get_backend
from cube_models.backends.base import SemanticBackend
from cube_models.model import load_model
from cubesage_core.db import connect
from cubesage_core.embeddings import Embedder, get_embedder
from cubesage_core.settings import Settings
from fourengine.calibration import ensure
from fourengine.model_terms import sync_model_terms
from fourengine.retrieve import Retriever
from fourengine.store import read_terms
from router.aggregate.values import ValueIndex
from router.components import Components
from router.decompose import decompose
from router.intent import classify_intent
from router.parse import Knowledge, build_lexicon
from router.parse.nearest import Nearest
from router.parse.nesting import Nesting
from router.parse.probe import Probe
from router.parse.repeated import keyed_labels
from router.parse.spelling import Speller
from router.schema_retrieval import SchemaRetrieval, WikiPassages
from router.semantic import ModelRoutes, SemanticLayer
from router.understanding import understand
from sag_index.backends import get_store
from sag_index.recall import SagRecall

log = logging.getLogger(__name__)
RETIRED_BACKEND_GRACE_S = 60.0  # a replaced backend is closed after in-flight queries (5 s timeout) are done


def load_components(settings: Settings, url: str) -> Components:
    """The real components over the database at ``url`` (startup cost paid here, once)."""
    sag = SagRecall(url, get_store(settings, url), settings)
    embedder = get_embedder(settings.embedding_backend)
    _calibrate(url, embedder)
    retriever = Retriever(url, embedder=embedder, passages=WikiPassages(sag))
    workers = ThreadPoolExecutor(max_workers=4, thread_name_prefix="cubesage-retrieve")
    routes = ModelRoutes(semantic_layer(settings, url, embedder))

    def refresh(kind: str) -> None:
        """Use what was just ingested: re-read the model folder, forget cached catalog and SAG searches."""
        if kind in ("cube-models", "glossary"):  # the parser's lexicon holds the glossary
            _close_later(routes.swap(semantic_layer(settings, url, embedder)).backend)
            retriever.invalidate_cache()
        if kind == "wiki":
            sag.refresh()

    def close() -> None:
        workers.shutdown(wait=True)
        retriever.close()
        sag.close()
        routes.current.backend.close()

    return Components(
        understand=understand,
        decompose=decompose,
        retrieve=SchemaRetrieval(retriever, embedder, settings, workers),
        recall_tables=sag.recall_tables,
        recall_rows=sag.recall_rows,
        classify_intent=classify_intent,
        aggregate=routes.aggregate,
        signals=routes.signals,
        close=close,
        refresh=refresh,
        value_index=routes.values,
        drill=routes.drill,
        parse=routes.read,
        spell=routes.spell,
        listing=routes.listing,
        load=routes.load,
        model=routes.model,
    )


def semantic_layer(settings: Settings, url: str, embedder: Embedder) -> SemanticLayer:
    """The configured model folder's model, its backend, dimension values and lexicon (the glossary's terms
    and the model's own words, synced into the term table first)."""
    model = load_model(settings.model_folder())
    with connect(url) as conn:
        values = ValueIndex.load(conn, model, settings.warehouse_schema)
        sync_model_terms(conn)  # the model's own words bind like glossary terms
        terms = read_terms(conn)
        probe = Probe.load(conn, url, model, settings.warehouse_schema)
        keyed = keyed_labels(conn, model, settings.warehouse_schema)
    lexicon = build_lexicon(model, terms, values)
    nearest = Nearest.build(model, embedder).find
    knowledge = Knowledge(model, lexicon, probe.find, nearest, keyed, probe.holds, Nesting(url, model).within)
    return SemanticLayer(model, get_backend(settings, url, model), values, knowledge, Speller.build(knowledge.lexicon))


def _calibrate(url: str, embedder: Embedder) -> None:
    """Fit the retrieval thresholds to the embedder when none are stored, or they were fitted for another
    embedder or index (``fourengine.calibration``); a database that refuses the write keeps what it has."""
    try:
        with connect(url) as conn:
            ensure(conn, embedder)
    except psycopg.Error as err:
        log.warning("retrieval calibration not updated: %s", err)


def _close_later(backend: SemanticBackend) -> None:
    timer = threading.Timer(RETIRED_BACKEND_GRACE_S, backend.close)
    timer.daemon = True
    timer.start()
