"""Vector/BM25 store backends and the factory that picks one from settings."""

from __future__ import annotations

import logging

from cubesage_core.settings import Settings
from sag_index.backends.base import VectorStore
from sag_index.errors import StoreUnavailable

log = logging.getLogger(__name__)


def get_store(settings: Settings, url: str, namespace: str = "") -> VectorStore:
    """Elasticsearch when ``settings.es_url`` is set, else PostgreSQL at ``url``.

    If Elasticsearch is unreachable and ``settings.es_fallback_postgres`` is true, the PostgreSQL
    store is returned with ``fallback_reason`` set; otherwise ``StoreUnavailable`` is raised. With the
    fallback allowed, the Elasticsearch store is wrapped in ``FailoverStore``: reads move to
    PostgreSQL when Elasticsearch stops answering mid-run.
    ``namespace`` is appended to the Elasticsearch index prefix (PostgreSQL namespaces are databases).
    """
    from sag_index.backends.postgres import PostgresStore

    if settings.es_url:
        from sag_index.backends.elasticsearch import ElasticsearchStore

        try:
            store: VectorStore = ElasticsearchStore(settings.es_url, prefix=settings.es_index_prefix + namespace)
            store.ensure()
            if settings.es_fallback_postgres:  # and if it dies mid-run: reads move to PostgreSQL
                from sag_index.backends.failover import FailoverStore

                return FailoverStore(store, lambda: _postgres(url))
            return store
        except StoreUnavailable as err:
            if not settings.es_fallback_postgres:
                raise
            log.warning("%s; falling back to the PostgreSQL store", err)
            store = PostgresStore(url)
            store.fallback_reason = str(err)
            store.ensure()
            return store
    store = PostgresStore(url)
    store.ensure()
    return store


__all__ = ["StoreUnavailable", "VectorStore", "get_store"]


def _postgres(url: str) -> VectorStore:
    from sag_index.backends.postgres import PostgresStore

    store = PostgresStore(url)
    store.ensure()
    return store
