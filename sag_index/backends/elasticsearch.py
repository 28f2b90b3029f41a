"""Elasticsearch backend: indices ``event_vectors``, ``entity_vectors``, ``event_entity_vectors``.

dense_vector fields (cosine, HNSW) serve kNN; ``tokens`` fields hold the shared tokenizer's
output analysed by the ``whitespace`` analyzer, so BM25 ranks the same terms as the PostgreSQL
backend. Writes go through the bulk helper; ids are the SAG ids, so re-indexing overwrites. Requests are
serialised by orjson, vectors straight from their float32 arrays: the shortest decimal that reads back as the
same float32, about half the bytes of a float64 list and a tenth of the stdlib encoder's CPU. While a run
writes, the indices do not refresh (``refresh_interval`` -1: no segment per second of bulk writes);
``flush()`` at the end of the run, ``delete_events`` and ``ensure()`` (every open) restore
``REFRESH_INTERVAL`` and refresh.
Index names carry ``prefix`` (settings.es_index_prefix plus an optional namespace).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from sag_index.backends.base import IndexBatch, VectorField, VectorStore
from sag_index.errors import StoreUnavailable
from sag_index.models import Hit

DIM = 512
REFRESH_INTERVAL = "1s"
T = TypeVar("T")
# exact (flat) kNN: our indices hold thousands to tens of thousands of vectors, where brute force is
# fast to query and far cheaper to build than HNSW graphs
_VEC = {"type": "dense_vector", "dims": DIM, "index": True, "similarity": "cosine", "index_options": {"type": "flat"}}
_TOKENS = {"type": "text", "analyzer": "whitespace", "similarity": "BM25"}
_MAPPINGS: dict[str, dict[str, Any]] = {
    "event_vectors": {
        "event_id": {"type": "keyword"},
        "chunk_id": {"type": "keyword"},
        "kind": {"type": "keyword"},
        "title": {"type": "text"},
        "tokens": _TOKENS,
        "title_vec": _VEC,
        "content_vec": _VEC,
    },
    "entity_vectors": {
        "entity_id": {"type": "keyword"},
        "name": {"type": "keyword"},
        "normalized": {"type": "keyword"},
        "type": {"type": "keyword"},
        "tokens": _TOKENS,
        "name_vec": _VEC,
    },
    "event_entity_vectors": {
        "event_id": {"type": "keyword"},
        "entity_id": {"type": "keyword"},
        "description": {"type": "text"},
        "desc_vec": _VEC,
    },
}
_VEC_FIELD = {"title": "title_vec", "content": "content_vec"}


def _cos(es_score: float) -> float:
    """ES reports cosine kNN scores as (1 + cos) / 2."""
    return 2.0 * float(es_score) - 1.0


def _block(tokens: Sequence[str] | None) -> dict[str, Any] | None:
    """Token blocking for entity kNN (same as the PostgreSQL backend): entities sharing a token."""
    return {"terms": {"tokens": sorted(set(tokens))}} if tokens else None


def _translate_errors(method: Callable[..., T]) -> Callable[..., T]:
    """Connection failures during a call surface as ``StoreUnavailable`` (typed), not client internals."""

    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        from elasticsearch import ConnectionError as EsConnectionError
        from elasticsearch import ConnectionTimeout

        try:
            return method(*args, **kwargs)
        except (EsConnectionError, ConnectionTimeout) as err:
            raise StoreUnavailable(f"Elasticsearch unreachable during {method.__name__}: {err}") from err

    return wrapper


class ElasticsearchStore(VectorStore):
    backend = "elasticsearch"

    def __init__(self, url: str, prefix: str = "cubesage_", timeout_s: float = 10.0) -> None:
        from elasticsearch import Elasticsearch
        from elasticsearch.serializer import OrjsonSerializer

        self._es = Elasticsearch(
            url, request_timeout=timeout_s, retry_on_timeout=False, max_retries=0, serializer=OrjsonSerializer()
        )
        self._url = url
        self.prefix = prefix.lower()
        self._dirty = False
        try:
            self._es.info()
        except Exception as err:
            raise StoreUnavailable(f"Elasticsearch at {url} unreachable: {type(err).__name__}: {err}") from err

    @property
    def key(self) -> str:
        return f"elasticsearch:{self._url}:{self.prefix}"

    def index(self, name: str) -> str:
        return f"{self.prefix}{name}"

    @_translate_errors
    def ensure(self) -> None:
        for name, props in _MAPPINGS.items():
            if not self._es.indices.exists(index=self.index(name)):
                self._es.indices.create(
                    index=self.index(name),
                    settings={"number_of_shards": 1, "number_of_replicas": 0, "refresh_interval": REFRESH_INTERVAL},
                    mappings={"dynamic": False, "properties": props},
                )
        self._refresh_interval(REFRESH_INTERVAL)  # a run that stopped mid-way left the indices not refreshing

    def _refresh_interval(self, interval: str) -> None:
        self._es.indices.put_settings(index=self._all(), settings={"index": {"refresh_interval": interval}})

    def _all(self) -> str:
        return ",".join(self.index(n) for n in _MAPPINGS)

    @_translate_errors
    def reset(self) -> None:
        for name in _MAPPINGS:
            self._es.indices.delete(index=self.index(name), ignore_unavailable=True)
        self.ensure()

    @_translate_errors
    def upsert(self, batch: IndexBatch) -> None:
        from elasticsearch.helpers import bulk

        actions: list[dict[str, Any]] = []
        for ev in batch.events:
            event: dict[str, Any] = {
                "event_id": ev.event_id,
                "chunk_id": ev.chunk_id,
                "kind": ev.kind,
                "title": ev.title,
                "tokens": " ".join(ev.tokens),
            }
            for name, vec in (("title_vec", ev.title_vec), ("content_vec", ev.content_vec)):
                if vec is not None:  # a table row's event has none
                    event[name] = vec
            actions.append({"_index": self.index("event_vectors"), "_id": ev.event_id, "_source": event})
        for en in batch.entities:
            source: dict[str, Any] = {
                "entity_id": en.entity_id,
                "name": en.name,
                "normalized": en.normalized,
                "type": en.type,
                "tokens": " ".join(en.tokens),
            }
            if en.name_vec is not None:
                source["name_vec"] = en.name_vec
            actions.append({"_index": self.index("entity_vectors"), "_id": en.entity_id, "_source": source})
        for ln in batch.links:
            actions.append(
                {
                    "_index": self.index("event_entity_vectors"),
                    "_id": f"{ln.event_id}|{ln.entity_id}",
                    "_source": {
                        "event_id": ln.event_id,
                        "entity_id": ln.entity_id,
                        "description": ln.description,
                        "desc_vec": ln.desc_vec,
                    },
                }
            )
        if actions:
            if not self._dirty:  # the first write of a run: no refreshes until flush()
                self._refresh_interval("-1")
            bulk(self._es, actions, chunk_size=500, refresh=False)
            self._dirty = True

    @_translate_errors
    def flush(self) -> None:
        if self._dirty:
            self._refresh_interval(REFRESH_INTERVAL)
            self._es.indices.refresh(index=self._all())
            self._dirty = False

    @_translate_errors
    def delete_events(self, event_ids: Sequence[str]) -> None:
        ids = list(event_ids)
        if not ids:
            return
        from elasticsearch.helpers import bulk

        self.flush()  # refresh="wait_for" below needs the indices refreshing again

        # no delete-by-query here (it lives in the reindex module): find link ids, then bulk-delete by id
        links = self._es.search(
            index=self.index("event_entity_vectors"), query={"terms": {"event_id": ids}}, size=10_000, source=False
        )["hits"]["hits"]
        actions = [{"_op_type": "delete", "_index": self.index("event_vectors"), "_id": i} for i in ids]
        actions += [
            {"_op_type": "delete", "_index": self.index("event_entity_vectors"), "_id": h["_id"]} for h in links
        ]
        bulk(self._es, actions, ignore_status=(404,), refresh="wait_for")

    # -- search ---------------------------------------------------------------------------------
    def _knn(
        self,
        index: str,
        field: str,
        vector: np.ndarray,
        k: int,
        filt: dict | None = None,
        source: list[str] | None = None,
    ) -> list[dict[str, Any]]:
        knn: dict[str, Any] = {
            "field": field,
            "query_vector": vector.tolist(),
            "k": k,
            "num_candidates": max(k * 5, 100),
        }
        if filt:
            knn["filter"] = filt
        resp = self._es.search(
            index=self.index(index), knn=knn, size=k, source={"includes": source} if source else False
        )
        return resp["hits"]["hits"]

    @_translate_errors
    def knn_events(
        self, vector: np.ndarray, k: int, field: VectorField = "content", kinds: Sequence[str] | None = None
    ) -> list[Hit]:
        filt = {"terms": {"kind": list(kinds)}} if kinds else None
        return [
            Hit(h["_id"], _cos(h["_score"])) for h in self._knn("event_vectors", _VEC_FIELD[field], vector, k, filt)
        ]

    @_translate_errors
    def score_events(self, vector: np.ndarray, ids: Sequence[str], field: VectorField = "content") -> dict[str, float]:
        if not ids:
            return {}
        hits = self._knn("event_vectors", _VEC_FIELD[field], vector, len(ids), {"ids": {"values": list(ids)}})
        return {h["_id"]: _cos(h["_score"]) for h in hits}

    @_translate_errors
    def knn_entities(
        self, vector: np.ndarray, k: int, threshold: float = 0.0, tokens: Sequence[str] | None = None
    ) -> list[Hit]:
        hits = self._knn("entity_vectors", "name_vec", vector, k, _block(tokens))
        return [Hit(h["_id"], s) for h in hits if (s := _cos(h["_score"])) >= threshold]

    def _knn_body(self, field: str, vector: np.ndarray, k: int, filt: dict | None) -> dict[str, Any]:
        knn: dict[str, Any] = {
            "field": field,
            "query_vector": vector.tolist(),
            "k": k,
            "num_candidates": max(k * 5, 100),
        }
        if filt:
            knn["filter"] = filt
        return {"knn": knn, "size": k, "_source": False}

    def _bm25_body(self, tokens: Sequence[str], k: int, filters: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "query": {
                "bool": {
                    "should": [{"match": {"tokens": " ".join(sorted(set(tokens)))}}],
                    "minimum_should_match": 1,
                    "filter": filters,
                }
            },
            "size": k,
            "_source": False,
        }

    def _msearch(self, bodies: list[dict[str, Any] | None]) -> list[list[dict[str, Any]]]:
        """Run the non-None searches on event_vectors in one round trip; None answers []."""
        searches: list[dict[str, Any]] = []
        for body in bodies:
            if body is not None:
                searches.extend([{"index": self.index("event_vectors")}, body])
        responses = iter(self._es.msearch(searches=searches)["responses"] if searches else [])
        out: list[list[dict[str, Any]]] = []
        for body in bodies:
            if body is None:
                out.append([])
                continue
            response = next(responses)
            if "error" in response:
                raise RuntimeError(f"Elasticsearch search failed: {response['error']}")
            out.append(response["hits"]["hits"])
        return out

    @_translate_errors
    def recall_events(
        self,
        vector: np.ndarray,
        tokens: Sequence[str],
        k: int,
        dense_kinds: Sequence[str] | None,
        kinds: Sequence[str] | None,
    ) -> tuple[list[Hit], list[Hit]]:
        knn = self._knn_body("content_vec", vector, k, {"terms": {"kind": list(dense_kinds)}}) if dense_kinds else None
        text = self._bm25_body(tokens, k, [{"terms": {"kind": list(kinds)}}] if kinds else []) if tokens else None
        knn_hits, text_hits = self._msearch([knn, text])
        return (
            [Hit(h["_id"], _cos(h["_score"])) for h in knn_hits],
            [Hit(h["_id"], float(h["_score"])) for h in text_hits],
        )

    @_translate_errors
    def hybrid_scores(
        self, vector: np.ndarray, dense_ids: Sequence[str], tokens: Sequence[str], ids: Sequence[str]
    ) -> tuple[dict[str, float], list[Hit]]:
        knn = (
            self._knn_body("content_vec", vector, len(dense_ids), {"ids": {"values": list(dense_ids)}})
            if dense_ids
            else None
        )
        text = self._bm25_body(tokens, len(ids), [{"ids": {"values": list(ids)}}]) if tokens and ids else None
        knn_hits, text_hits = self._msearch([knn, text])
        return ({h["_id"]: _cos(h["_score"]) for h in knn_hits}, [Hit(h["_id"], float(h["_score"])) for h in text_hits])

    @_translate_errors
    def knn_entities_many(
        self,
        vectors: Sequence[np.ndarray],
        k: int,
        threshold: float = 0.0,
        tokens: Sequence[Sequence[str]] | None = None,
    ) -> list[list[Hit]]:
        """One ``msearch`` round trip for all mentions."""
        if not len(vectors):
            return []
        body: list[dict[str, Any]] = []
        for i, vec in enumerate(vectors):
            knn: dict[str, Any] = {"field": "name_vec", "query_vector": vec.tolist(), "k": k, "num_candidates": 100}
            block = _block(tokens[i] if tokens else None)
            if block:
                knn["filter"] = block
            body.append({"index": self.index("entity_vectors")})
            body.append({"knn": knn, "size": k, "_source": False})
        responses = self._es.msearch(searches=body)["responses"]
        return [
            [Hit(h["_id"], s) for h in r["hits"]["hits"] if (s := _cos(h["_score"])) >= threshold] for r in responses
        ]

    @_translate_errors
    def knn_links(self, vector: np.ndarray, k: int) -> list[tuple[str, str, float]]:
        hits = self._knn("event_entity_vectors", "desc_vec", vector, k, source=["event_id", "entity_id"])
        return [(h["_source"]["event_id"], h["_source"]["entity_id"], _cos(h["_score"])) for h in hits]

    def _bm25(self, index: str, tokens: Sequence[str], k: int, filters: list[dict[str, Any]]) -> list[Hit]:
        terms = sorted(set(tokens))
        if not terms:
            return []
        query: dict[str, Any] = {
            "bool": {"should": [{"match": {"tokens": " ".join(terms)}}], "minimum_should_match": 1, "filter": filters}
        }
        resp = self._es.search(index=self.index(index), query=query, size=k, source=False)
        return [Hit(h["_id"], float(h["_score"])) for h in resp["hits"]["hits"]]

    @_translate_errors
    def text_events(
        self, tokens: Sequence[str], k: int, kinds: Sequence[str] | None = None, ids: Sequence[str] | None = None
    ) -> list[Hit]:
        if ids is not None and not ids:
            return []
        filters: list[dict[str, Any]] = []
        if kinds:
            filters.append({"terms": {"kind": list(kinds)}})
        if ids is not None:
            filters.append({"ids": {"values": list(ids)}})
        return self._bm25("event_vectors", tokens, k, filters)

    @_translate_errors
    def text_entities(self, tokens: Sequence[str], k: int) -> list[Hit]:
        return self._bm25("entity_vectors", tokens, k, [])

    @_translate_errors
    def count(self) -> dict[str, int]:
        def n(name: str) -> int:
            if not self._es.indices.exists(index=self.index(name)):
                return 0
            self._es.indices.refresh(index=self.index(name))
            return int(self._es.count(index=self.index(name))["count"])

        return {"events": n("event_vectors"), "entities": n("entity_vectors"), "links": n("event_entity_vectors")}

    def close(self) -> None:
        self._es.close()
