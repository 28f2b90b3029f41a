"""One contract for both vector/BM25 backends (PostgreSQL + pgvector, Elasticsearch), on real servers."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from cubesage_core.embeddings import get_embedder
from sag_index._text import tokenize
from sag_index.backends.base import EntityDoc, EventDoc, IndexBatch, LinkDoc, VectorStore

pytestmark = pytest.mark.integration
EMB = get_embedder("hash")

EVENTS = {
    "ev_refund": ("doc", "fact_refund", "refunds of orders with the refund reason damaged or late delivery"),
    "ev_order": ("doc", "fact_order", "orders with status completed refunded cancelled and the order channel"),
    "ev_pay": ("doc", "fact_payment", "payments of orders by card alipay wechat or cash"),
    "ev_region": ("doc", "dim_region", "sales regions east china north china 华东 华北"),
    "ev_row_1": ("row", "customer 王芳", "customer 王芳 customer_id 4833 consumer segment city 兰州 Lanzhou"),
    "ev_row_2": ("row", "product Aurora X1 headphones", "product Aurora X1 headphones electronics brand Aurora"),
}
ENTITIES = {
    "en_wf": "王芳",
    "en_aurora": "Aurora X1 headphones",
    "en_refund": "fact_refund",
    "en_lanzhou": "Lanzhou",
    "en_key": "customer_id 4833",
}


def _batch() -> IndexBatch:
    batch = IndexBatch()
    for event_id, (kind, title, text) in EVENTS.items():
        tv, cv = EMB.embed([title, f"{title}. {text}"])
        batch.events.append(EventDoc(event_id, f"c_{event_id}", kind, title, tokenize(f"{title}\n{text}"), tv, cv))
    for entity_id, name in ENTITIES.items():
        vec = None if entity_id == "en_key" else EMB.embed_one(name)
        batch.entities.append(EntityDoc(entity_id, name, name.lower(), "x", tokenize(name), vec))
    batch.links.append(
        LinkDoc(
            "ev_refund",
            "en_refund",
            "fact_refund is the refund table",
            EMB.embed_one("fact_refund is the refund table"),
        )
    )
    batch.links.append(LinkDoc("ev_row_1", "en_wf", "王芳 is a customer", EMB.embed_one("王芳 is a customer")))
    return batch


@pytest.fixture
def loaded(store: VectorStore) -> VectorStore:
    store.upsert(_batch())
    store.flush()
    return store


def test_upsert_is_idempotent(loaded: VectorStore) -> None:
    assert loaded.count() == {"events": 6, "entities": 5, "links": 2}
    loaded.upsert(_batch())
    loaded.flush()
    assert loaded.count() == {"events": 6, "entities": 5, "links": 2}


def test_knn_events_cosine_order_and_kind_filter(loaded: VectorStore) -> None:
    title, text = EVENTS["ev_refund"][1:]
    query = EMB.embed_one(f"{title}. {text}")
    hits = loaded.knn_events(query, 3)
    assert hits[0].id == "ev_refund" and hits[0].score == pytest.approx(1.0, abs=1e-3)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    rows = loaded.knn_events(query, 10, kinds=["row"])
    assert {h.id for h in rows} == {"ev_row_1", "ev_row_2"}
    by_title = loaded.knn_events(EMB.embed_one("dim_region"), 1, field="title")
    assert by_title[0].id == "ev_region" and by_title[0].score == pytest.approx(1.0, abs=1e-3)


def test_score_events_matches_numpy(loaded: VectorStore) -> None:
    query = EMB.embed_one("orders refunded by reason")
    ids = ["ev_refund", "ev_pay", "ev_row_2"]
    scores = loaded.score_events(query, ids)
    assert set(scores) == set(ids)
    for event_id in ids:
        title, text = EVENTS[event_id][1:]
        expected = float(np.dot(query, EMB.embed_one(f"{title}. {text}")))
        assert scores[event_id] == pytest.approx(expected, abs=2e-3)
    assert loaded.score_events(query, []) == {}


def _bm25_reference(query: list[str], ids: list[str]) -> list[str]:
    docs = {i: tokenize(f"{EVENTS[i][1]}\n{EVENTS[i][2]}") for i in ids}
    n = len(docs)
    avgdl = sum(len(d) for d in docs.values()) / n
    scores = {}
    for doc_id, tokens in docs.items():
        tf = Counter(tokens)
        score = 0.0
        for term in set(query):
            df = sum(1 for d in docs.values() if term in d)
            if tf[term]:
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                score += idf * tf[term] * 2.2 / (tf[term] + 1.2 * (0.25 + 0.75 * len(tokens) / avgdl))
        if score > 0:
            scores[doc_id] = score
    return sorted(scores, key=lambda d: -scores[d])


def test_an_event_indexed_again_keeps_only_its_new_terms(loaded: VectorStore) -> None:
    title, text = "late fees", "a loan returned after its due day pays a late fee"
    tv, cv = EMB.embed([title, f"{title}. {text}"])
    again = IndexBatch(events=[EventDoc("ev_pay", "c_ev_pay", "doc", title, tokenize(f"{title}\n{text}"), tv, cv)])
    loaded.upsert(again)
    loaded.flush()
    assert loaded.text_events(tokenize("due day loan"), 3)[0].id == "ev_pay"
    assert "ev_pay" not in [h.id for h in loaded.text_events(tokenize("alipay wechat cash"), 6)]


def test_a_document_given_twice_in_one_batch_is_indexed_once_as_given_last(loaded: VectorStore) -> None:
    def event(text: str) -> EventDoc:
        tv, cv = EMB.embed(["twice", f"twice. {text}"])
        return EventDoc("ev_twice", "c_ev_twice", "doc", "twice", tokenize(f"twice\n{text}"), tv, cv)

    name = EntityDoc("en_twice", "Twice", "twice", "x", tokenize("Twice"), EMB.embed_one("Twice"))
    loaded.upsert(IndexBatch(events=[event("zebra crossing"), event("walrus colony")], entities=[name, name]))
    loaded.flush()
    assert loaded.count() == {"events": 7, "entities": 6, "links": 2}
    assert loaded.text_events(tokenize("walrus"), 3)[0].id == "ev_twice"
    assert "ev_twice" not in [h.id for h in loaded.text_events(tokenize("zebra"), 7)]


def test_text_events_bm25(loaded: VectorStore) -> None:
    query = tokenize("which table has the refund reason")
    hits = loaded.text_events(query, 5, kinds=["doc"])
    docs = [i for i, v in EVENTS.items() if v[0] == "doc"]
    assert [h.id for h in hits] == _bm25_reference(query, docs)
    assert hits[0].id == "ev_refund"
    restricted = loaded.text_events(tokenize("refund order channel"), 5, ids=["ev_order", "ev_pay", "ev_region"])
    assert [h.id for h in restricted] == ["ev_order"]
    assert loaded.text_events([], 5) == [] and loaded.text_events(query, 5, ids=[]) == []
    zh = loaded.text_events(tokenize("华东"), 3)
    assert [h.id for h in zh] == ["ev_region"]


def test_entity_recall_threshold_and_blocking(loaded: VectorStore) -> None:
    hits = loaded.knn_entities(EMB.embed_one("Aurora X1 headphones"), 20, threshold=0.9)
    assert [h.id for h in hits] == ["en_aurora"] and hits[0].score == pytest.approx(1.0, abs=1e-3)
    near = loaded.knn_entities(EMB.embed_one("aurora x1 headphone"), 20, 0.9, tokenize("aurora x1 headphone"))
    assert [h.id for h in near] == ["en_aurora"]
    assert loaded.knn_entities(EMB.embed_one("Nimbus S2 smartwatch"), 20, threshold=0.9) == []
    many = loaded.knn_entities_many(
        [EMB.embed_one("王芳"), EMB.embed_one("Lanzhou")], 5, 0.9, [tokenize("王芳"), tokenize("Lanzhou")]
    )
    assert [[h.id for h in hs] for hs in many] == [["en_wf"], ["en_lanzhou"]]


def test_text_entities_and_links(loaded: VectorStore) -> None:
    assert loaded.text_entities(tokenize("refunds in Lanzhou"), 5)[0].id == "en_lanzhou"
    assert {h.id for h in loaded.text_entities(tokenize("customer_id 4833"), 5)} == {"en_key"}
    links = loaded.knn_links(EMB.embed_one("fact_refund is the refund table"), 1)
    assert links[0][:2] == ("ev_refund", "en_refund") and links[0][2] == pytest.approx(1.0, abs=1e-3)


def test_reset_empties_the_namespace(loaded: VectorStore) -> None:
    loaded.reset()
    assert loaded.count() == {"events": 0, "entities": 0, "links": 0}
    assert loaded.knn_events(EMB.embed_one("x"), 5) == []


def test_delete_events(loaded: VectorStore) -> None:
    loaded.delete_events(["ev_refund", "ev_row_1"])
    loaded.flush()
    assert loaded.count() == {"events": 4, "entities": 5, "links": 0}
    assert "ev_refund" not in {h.id for h in loaded.text_events(tokenize("refund reason"), 10)}
    assert "ev_refund" not in loaded.score_events(EMB.embed_one("refund"), ["ev_refund", "ev_pay"])


def test_elasticsearch_going_down_is_a_typed_error(es_url: str) -> None:
    from elasticsearch import Elasticsearch

    from sag_index.backends.elasticsearch import ElasticsearchStore
    from sag_index.errors import StoreUnavailable

    store = ElasticsearchStore(es_url, prefix="sagdown_")
    # the node "goes down" after the store was built: point the client at a closed port
    store._es = Elasticsearch("http://127.0.0.1:9", request_timeout=2, max_retries=0)  # type: ignore[attr-defined]
    with pytest.raises(StoreUnavailable, match="during knn_events"):
        store.knn_events(EMB.embed_one("x"), 3)
