"""Each real service is up and used: pgvector cosine, Cube /v1/load on demo numbers, PG warehouse."""

from __future__ import annotations

import json
import time

import httpx
import jwt
import numpy as np

from cubesage_core.db import connection


def test_pgvector_cosine_query(pg_url: str) -> None:
    with connection(pg_url) as conn:
        conn.execute("CREATE TEMP TABLE v (id int, e vector(3))")
        conn.execute("INSERT INTO v VALUES (1, %s), (2, %s)", (np.array([1, 0, 0]), np.array([0, 1, 0])))
        rows = conn.execute(
            "SELECT id, 1 - (e <=> %s) AS cos FROM v ORDER BY e <=> %s", (np.array([1, 0.1, 0]),) * 2
        ).fetchall()
    assert rows[0][0] == 1 and rows[0][1] > 0.99 and rows[1][1] < 0.2


def test_cube_load_returns_demo_numbers(cube, pg_url: str) -> None:
    query = {"measures": ["orders.count"], "dimensions": ["orders.status"]}
    token = jwt.encode({}, cube.secret, algorithm="HS256")
    deadline = time.monotonic() + 30
    while True:
        resp = httpx.get(
            f"{cube.url}/cubejs-api/v1/load",
            params={"query": json.dumps(query)},
            headers={"Authorization": token},
            timeout=30,
        )
        body = resp.json()
        if body.get("error") != "Continue wait" or time.monotonic() > deadline:
            break
    assert resp.status_code == 200, body
    from_cube = {r["orders.status"]: int(r["orders.count"]) for r in body["data"]}
    with connection(pg_url) as conn:
        direct = dict(conn.execute("SELECT status, count(*) FROM warehouse.fact_order GROUP BY 1").fetchall())
    assert from_cube == direct
    assert sum(direct.values()) > 0


def test_elasticsearch_index_and_search_round_trip(es_url: str) -> None:
    from elasticsearch import Elasticsearch

    es = Elasticsearch(es_url, request_timeout=30)
    index = "cubesage_services_probe"
    es.options(ignore_status=404).indices.delete(index=index)
    es.indices.create(
        index=index,
        settings={"number_of_replicas": 0},
        mappings={
            "properties": {
                "text": {"type": "text"},
                "vec": {"type": "dense_vector", "dims": 3, "index": True, "similarity": "cosine"},
            }
        },
    )
    es.index(index=index, id="a", document={"text": "refund reasons by order", "vec": [1, 0, 0]})
    es.index(index=index, id="b", document={"text": "regions of China", "vec": [0, 1, 0]}, refresh=True)
    bm25 = es.search(index=index, query={"match": {"text": "refund"}})
    knn = es.search(index=index, knn={"field": "vec", "query_vector": [0.1, 1, 0], "k": 1, "num_candidates": 10})
    assert [h["_id"] for h in bm25["hits"]["hits"]] == ["a"]
    assert knn["hits"]["hits"][0]["_id"] == "b"
    es.indices.delete(index=index)
