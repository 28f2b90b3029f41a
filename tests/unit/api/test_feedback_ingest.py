"""/v1/feedback, /v1/ingest/*, /v1/catalog, /v1/queries/{id}, /healthz, /readyz, /schema."""

from __future__ import annotations

import uuid

import pytest

from tests.unit.api.conftest import Harness


def _ask(api: Harness) -> str:
    return api.client.post("/v1/ask", json={"question": "GMV by region"}).json()["query_id"]


ADMIN = {"Authorization": "Bearer cs_boss_token"}
INGEST = {"Authorization": "Bearer cs_feeder_token"}
ASKER = {"Authorization": "Bearer cs_asker_token"}


@pytest.fixture
def keyed(make_api) -> Harness:
    """Keyless loopback mode plus three keys: admin, ingest and ask scopes."""
    return make_api(
        tokens={"boss": "cs_boss_token", "feeder": "cs_feeder_token", "asker": "cs_asker_token"},
        scopes={"boss": {"admin"}, "feeder": {"ingest"}, "asker": {"ask"}},
    )


def test_thumbs_up_proposes_the_answers_own_cube_query_and_learns_nothing(api: Harness) -> None:
    qid = _ask(api)
    r = api.client.post("/v1/feedback", json={"query_id": qid, "verdict": "up"})
    body = r.json()
    assert r.status_code == 200 and body["learned"] is False and body["status"] == "pending"
    assert api.knowledge.learned == []
    proposal = api.knowledge.proposed[body["proposal_id"]]
    assert proposal.question == "GMV by region" and proposal.cube_query["measures"] == ["order_items.gmv"]
    assert proposal.status == "pending" and proposal.sql is None
    assert api.store.log[qid]["feedback"]["proposal_id"] == body["proposal_id"]


def test_thumbs_down_without_correction_is_recorded_only(api: Harness) -> None:
    qid = _ask(api)
    r = api.client.post("/v1/feedback", json={"query_id": qid, "verdict": "down", "comment": "wrong region"})
    assert r.status_code == 200 and r.json()["learned"] is False and r.json()["status"] == "recorded"
    assert api.knowledge.learned == [] and api.knowledge.proposed == {}
    assert api.store.log[qid]["feedback"]["comment"] == "wrong region"


def test_corrections_are_validated_before_they_are_proposed(api: Harness) -> None:
    qid = _ask(api)
    bad = api.client.post(
        "/v1/feedback", json={"query_id": qid, "verdict": "down", "corrected_cube_query": {"measures": ["orders.nope"]}}
    )
    assert bad.status_code == 422 and "orders.nope" in bad.json()["detail"]
    bad_sql = api.client.post(
        "/v1/feedback", json={"query_id": qid, "verdict": "down", "corrected_sql": "DROP TABLE warehouse.fact_order"}
    )
    assert bad_sql.status_code == 422
    assert api.knowledge.proposed == {} and api.store.log[qid]["feedback"] is None
    good = api.client.post("/v1/feedback", json={"query_id": qid, "verdict": "down", "corrected_sql": "SELECT 2"})
    assert good.status_code == 200 and good.json()["status"] == "pending"
    assert api.knowledge.proposed[good.json()["proposal_id"]].sql == "SELECT 2" and api.knowledge.learned == []


def test_only_an_admin_key_reviews_proposals(keyed: Harness) -> None:
    qid = _ask(keyed)
    pid = keyed.client.post("/v1/feedback", json={"query_id": qid, "verdict": "up"}).json()["proposal_id"]
    approve = f"/v1/feedback/proposals/{pid}/approve"
    assert keyed.client.post(approve).status_code == 401  # keyless: never an admin
    for headers in (ASKER, INGEST):
        refused = keyed.client.post(approve, headers=headers)
        assert refused.status_code == 403 and "admin" in refused.json()["detail"]
    assert keyed.client.get("/v1/feedback/proposals", headers=ASKER).status_code == 403
    assert keyed.knowledge.learned == []
    listed = keyed.client.get("/v1/feedback/proposals", headers=ADMIN).json()["proposals"]
    assert [p["proposal_id"] for p in listed] == [pid] and listed[0]["status"] == "pending"
    done = keyed.client.post(approve, headers=ADMIN)
    assert done.status_code == 200 and done.json()["status"] == "approved"
    assert done.json()["reviewed_by"] == "key:boss" and keyed.knowledge.learned[-1][0] == "GMV by region"
    again = keyed.client.post(approve, headers=ADMIN)
    assert again.status_code == 422 and "not pending" in again.json()["detail"]
    assert keyed.client.post("/v1/feedback/proposals/999/reject", headers=ADMIN).status_code == 404
    assert keyed.client.get("/v1/feedback/proposals?status=pending", headers=ADMIN).json()["proposals"] == []


def test_rejected_proposals_never_reach_the_cache(keyed: Harness) -> None:
    qid = _ask(keyed)
    pid = keyed.client.post(
        "/v1/feedback",
        json={"query_id": qid, "verdict": "down", "corrected_cube_query": {"measures": ["orders.count"]}},
    ).json()["proposal_id"]
    assert keyed.client.post(f"/v1/feedback/proposals/{pid}/reject", headers=ADMIN).json()["status"] == "rejected"
    assert keyed.client.post(f"/v1/feedback/proposals/{pid}/approve", headers=ADMIN).status_code == 422
    assert keyed.knowledge.learned == []


def test_feedback_on_unknown_or_malformed_ids(api: Harness) -> None:
    assert api.client.post("/v1/feedback", json={"query_id": str(uuid.uuid4()), "verdict": "up"}).status_code == 404
    assert api.client.post("/v1/feedback", json={"query_id": "not-a-uuid", "verdict": "up"}).status_code == 400
    assert api.client.post("/v1/feedback", json={"query_id": str(uuid.uuid4()), "verdict": "meh"}).status_code == 400


def test_ingest_needs_the_ingest_scope_even_on_loopback(keyed: Harness, make_api) -> None:
    wiki = {"documents": [{"name": "orders", "content": "# Orders\nOne row per order."}]}
    keyless = keyed.client.post("/v1/ingest/wiki", json=wiki)
    assert keyless.status_code == 401 and "ingest" in keyless.json()["detail"]
    asker = keyed.client.post("/v1/ingest/wiki", json=wiki, headers=ASKER)
    assert asker.status_code == 403
    assert keyed.knowledge.ingested == {} and keyed.service.changed == []
    assert keyed.client.post("/v1/ingest/wiki", json=wiki, headers=INGEST).status_code == 200
    assert keyed.client.post("/v1/ingest/wiki", json=wiki, headers=ADMIN).status_code == 200
    opened = make_api(api_ingest_requires_key=False)
    assert opened.client.post("/v1/ingest/wiki", json=wiki).status_code == 200  # explicitly disabled


def test_ingest_validates_and_reports_changes(make_api) -> None:
    api = make_api(api_ingest_requires_key=False)
    bad_yaml = api.client.post("/v1/ingest/cube-models", json={"files": [{"name": "x.yml", "content": "a: [b"}]})
    assert bad_yaml.status_code == 422 and "x.yml" in bad_yaml.json()["detail"]
    not_cube = api.client.post("/v1/ingest/cube-models", json={"files": [{"name": "x.yml", "content": "a: 1"}]})
    assert not_cube.status_code == 422
    bad_name = api.client.post("/v1/ingest/cube-models", json={"files": [{"name": "../x.yml", "content": ""}]})
    assert bad_name.status_code == 400
    model = {"files": [{"name": "m.yml", "content": "cubes:\n  - name: t\n    sql_table: t\n"}]}
    first = api.client.post("/v1/ingest/cube-models", json=model).json()
    again = api.client.post("/v1/ingest/cube-models", json=model).json()
    assert (first["added"], again["added"], again["unchanged"]) == (1, 0, 1)
    wiki = api.client.post(
        "/v1/ingest/wiki",
        json={
            "documents": [
                {"name": "orders", "content": "# Orders\nOne row per order.", "format": "markdown"},
                {"name": "rows", "content": '{"id": 1}\n{"id": 2}', "format": "json"},
            ]
        },
    )
    assert wiki.status_code == 200 and wiki.json()["added"] == 2
    bad_json = api.client.post(
        "/v1/ingest/wiki", json={"documents": [{"name": "r", "content": "{oops", "format": "json"}]}
    )
    assert bad_json.status_code == 422
    empty = api.client.post("/v1/ingest/wiki", json={"documents": []})
    assert empty.status_code == 400
    csv_ok = api.client.post("/v1/ingest/glossary", json={"format": "csv", "content": "term,definition\nGMV,x\n"})
    assert csv_ok.status_code == 200 and csv_ok.json()["kind"] == "glossary"
    csv_empty = api.client.post("/v1/ingest/glossary", json={"format": "csv", "content": "term,definition\n"})
    assert csv_empty.status_code == 422
    # every accepted ingest (and no refused one) tells the running service to use the new knowledge
    assert api.service.changed == ["cube-models", "cube-models", "wiki", "glossary"]


def test_catalog_and_stored_queries(api: Harness) -> None:
    catalog = api.client.get("/v1/catalog").json()
    assert catalog["metrics"][0]["name"] == "order_items.gmv" and catalog["terms"][0]["synonyms"] == ["成交总额"]
    qid = _ask(api)
    stored = api.client.get(f"/v1/queries/{qid}").json()
    assert stored["question"] == "GMV by region" and stored["plan"]["cube_query"]["measures"]
    assert api.client.get(f"/v1/queries/{uuid.uuid4()}").status_code == 404
    assert api.client.get("/v1/queries/123").status_code == 404


def test_health_and_readiness(make_api) -> None:
    api = make_api()
    assert api.client.get("/healthz").json() == {"status": "ok"}
    ready = api.client.get("/readyz")
    assert ready.status_code == 200 and ready.json()["status"] == "ready"
    dead = "http://127.0.0.1:9"
    degraded = make_api(cube_url=dead, cube_fallback_builtin=True).client.get("/readyz")
    assert degraded.status_code == 200 and degraded.json()["status"] == "degraded"
    assert degraded.json()["checks"]["cube"]["ok"] is False
    down = make_api(es_url=dead, es_fallback_postgres=False).client.get("/readyz")
    assert down.status_code == 503 and down.json()["status"] == "unavailable"


def test_openapi_schema_lists_every_route(api: Harness) -> None:
    schema = api.client.get("/schema/openapi.json").json()
    for path in (
        "/v1/ask",
        "/v1/ask/stream",
        "/v1/nl2cube",
        "/v1/feedback",
        "/v1/ingest/wiki",
        "/v1/ingest/cube-models",
        "/v1/ingest/glossary",
        "/v1/catalog",
        "/v1/queries/{query_id}",
        "/healthz",
        "/readyz",
    ):
        assert path in schema["paths"], path
