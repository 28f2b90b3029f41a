"""POST /v1/cube/load (a dashboard tile's stored query) and GET /v1/suggestions, against fakes."""

from __future__ import annotations

from tests.unit.api.conftest import Harness

GMV = {"measures": ["order_items.gmv"]}


def test_a_stored_query_is_validated_then_run_without_a_question(api: Harness) -> None:
    resp = api.client.post("/v1/cube/load", json={"cube_query": GMV, "today": "2025-06-30", "language": "zh"})
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert body["table"]["display"] == [["200.75"]] and body["chart"]["usermeta"]["shape"] == "kpi"
    assert body["backend"] == "builtin" and body["sql"] == ["SELECT 1"] and body["today"] == "2025-06-30"
    [call] = api.service.calls
    assert call["load"] == [("", GMV)] and call["language"] == "zh" and "question" not in call


def test_compared_periods_send_every_labelled_query(api: Harness) -> None:
    queries = [{"label": "2024", "cube_query": GMV}, {"label": "2023", "cube_query": GMV}]
    resp = api.client.post("/v1/cube/load", json={"cube_queries": queries})
    assert resp.status_code == 200 and len(resp.json()["sql"]) == 2
    assert api.service.calls[0]["load"] == [("2024", GMV), ("2023", GMV)]


def test_bad_stored_queries_are_refused_with_a_message(api: Harness) -> None:
    both = api.client.post(
        "/v1/cube/load", json={"cube_query": GMV, "cube_queries": [{"label": "", "cube_query": GMV}]}
    )
    neither = api.client.post("/v1/cube/load", json={})
    unknown = api.client.post("/v1/cube/load", json={"cube_query": {"measures": ["orders.nope"]}})
    extra = api.client.post("/v1/cube/load", json={"cube_query": GMV, "question": "GMV"})
    assert both.status_code == neither.status_code == 400 and "either" in both.json()["detail"]
    assert unknown.status_code == 422 and "unknown member orders.nope" in unknown.json()["detail"]
    assert extra.status_code == 400
    assert api.service.calls == []  # nothing ran


def test_stored_queries_need_the_api_key_when_keys_are_required(make_api) -> None:
    api = make_api(tokens={"k1": "secret-token"}, api_require_keys=True)
    assert api.client.post("/v1/cube/load", json={"cube_query": GMV}).status_code == 401
    ok = api.client.post("/v1/cube/load", json={"cube_query": GMV}, headers={"Authorization": "Bearer secret-token"})
    assert ok.status_code == 200


def test_suggestions_in_the_asked_language(api: Harness) -> None:
    en = api.client.get("/v1/suggestions")
    zh = api.client.get("/v1/suggestions", params={"language": "zh"})
    assert en.json() == {
        "questions": ["GMV by channel this year"],
        "today": "2025-06-30",
        "period": ["2023-01", "2025-06"],
    }
    assert zh.json()["questions"] == ["今年各渠道的GMV"]
    assert api.client.get("/v1/suggestions", params={"language": "fr"}).status_code == 400
