"""/v1/ask and /v1/ask/stream with a fake service: answers, stages, limits, errors, session memory."""

from __future__ import annotations

import json

from tests.unit.api.conftest import Harness


def sse_events(text: str) -> list[tuple[str, dict]]:
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        lines = block.strip().splitlines()
        if not lines:
            continue
        name = next(line[6:].strip() for line in lines if line.startswith("event:"))
        data = "\n".join(line[5:].lstrip() for line in lines if line.startswith("data:"))
        events.append((name, json.loads(data)))
    return events


def test_ask_returns_the_answer_and_audits_it(api: Harness) -> None:
    r = api.client.post(
        "/v1/ask", json={"question": "GMV by region", "session_id": "s1", "mode": "fast", "today": "2025-06-30"}
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["intent"] == "aggregate"
    assert body["table"]["rows"][0] == ["East", 120.5] and body["table"]["formats"] == [None, "currency"]
    assert body["chart"]["mark"] == "bar"
    assert body["provenance"]["cube_query"]["measures"] == ["order_items.gmv"]
    call = api.service.calls[-1]
    assert call["mode"] == "fast" and str(call["today"]) == "2025-06-30" and call["session_id"] == "s1"
    logged = api.store.log[body["query_id"]]
    assert logged["question"] == "GMV by region" and logged["session_id"] == "s1"
    assert logged["executed_sql"] == "SELECT 1"


def test_follow_up_in_the_same_session_gets_the_previous_turn(api: Harness) -> None:
    api.client.post("/v1/ask", json={"question": "GMV by region", "session_id": "abc"})
    r = api.client.post("/v1/ask", json={"question": "and by channel?", "session_id": "abc"})
    assert r.status_code == 200
    previous = api.service.calls[-1]["previous"]
    assert previous is not None and previous.question == "GMV by region"
    api.client.post("/v1/ask", json={"question": "只看华东", "session_id": "other"})
    assert api.service.calls[-1]["previous"] is None
    api.client.post("/v1/ask", json={"question": "no session"})
    assert api.service.calls[-1]["previous"] is None


def test_stream_sends_each_stage_then_the_answer(api: Harness) -> None:
    r = api.client.post("/v1/ask/stream", json={"question": "GMV by region"})
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/event-stream")
    events = sse_events(r.text)
    assert [name for name, _ in events] == ["intent", "retrieval", "plan", "rows", "answer"]
    answer = events[-1][1]
    assert answer["text"].startswith("GMV") and answer["query_id"] in api.store.log


def test_stream_reports_failures_as_an_error_event_without_internals(api: Harness) -> None:
    r = api.client.post("/v1/ask/stream", json={"question": "please explode"})
    events = sse_events(r.text)
    assert events[-1][0] == "error"
    assert events[-1][1]["status_code"] == 500
    assert "/etc/passwd" not in r.text and "Traceback" not in r.text


def test_question_limits_give_clear_4xx(make_api) -> None:
    api = make_api(api_max_question_chars=50)
    too_long = api.client.post("/v1/ask", json={"question": "x" * 51})
    assert too_long.status_code == 400 and "limit is 50" in too_long.json()["detail"]
    assert api.client.post("/v1/ask", json={"question": "   "}).status_code == 400
    assert api.client.post("/v1/ask", json={"question": ""}).status_code == 400
    assert api.client.post("/v1/ask", json={"question": "a\x00b"}).status_code == 400
    assert api.client.post("/v1/ask", json={"question": "q", "mode": "turbo"}).status_code == 400
    assert api.client.post("/v1/ask", json={"question": "q", "today": "yesterday"}).status_code == 400
    assert api.client.post("/v1/ask", json={"question": "q", "today": "0001-01-01"}).status_code == 400
    assert api.client.post("/v1/ask", json={"question": "q", "session_id": "a b"}).status_code == 400
    assert api.client.post("/v1/ask", json={"q": "GMV"}).status_code == 400
    assert (
        api.client.post("/v1/ask", content=b"{not json", headers={"content-type": "application/json"}).status_code
        == 400
    )
    assert api.service.calls == []


def test_errors_are_mapped_and_never_leak_internals(api: Harness) -> None:
    boom = api.client.post("/v1/ask", json={"question": "please explode"})
    assert boom.status_code == 500
    assert boom.json() == {
        "status_code": 500,
        "error": "internal_error",
        "detail": "internal error; the incident was logged",
    }
    down = api.client.post("/v1/ask", json={"question": "store unavailable?"})
    assert down.status_code == 503 and "unavailable" in down.json()["detail"]
    vague = api.client.post("/v1/ask", json={"question": "ambiguous"})
    assert vague.status_code == 422 and "ambiguous" in vague.json()["detail"]


def test_body_size_limit_gives_413(make_api) -> None:
    api = make_api(api_max_body_bytes=1000)
    r = api.client.post("/v1/ask", json={"question": "GMV " + "y" * 2000})
    assert r.status_code == 413
    assert r.json()["error"] == "payload_too_large"


def test_nl2cube_runs_only_when_asked(api: Harness) -> None:
    plain = api.client.post("/v1/nl2cube", json={"question": "GMV"})
    assert plain.status_code == 200
    assert plain.json()["cube_query"] == {"measures": ["order_items.gmv"]}
    assert plain.json()["rows"] is None and plain.json()["confidence"] == 0.8
    ran = api.client.post("/v1/nl2cube", json={"question": "GMV", "run": True})
    assert ran.json()["rows"] == [{"order_items.gmv": 200.75}]


def test_repeated_questions_are_served_from_the_answer_cache(api: Harness) -> None:
    first = api.client.post("/v1/ask", json={"question": "GMV by region", "today": "2025-06-30"}).json()
    second = api.client.post("/v1/ask", json={"question": "  gmv BY region ", "today": "2025-06-30"}).json()
    assert len(api.service.calls) == 1
    assert second["query_id"] != first["query_id"] and second["table"] == first["table"]
    assert second["provenance"]["answer_cache"]["of_query_id"] == first["query_id"]
    assert {first["query_id"], second["query_id"]} <= set(api.store.log)
    api.client.post("/v1/ask", json={"question": "GMV by region", "today": "2025-06-29"})
    api.client.post("/v1/ask", json={"question": "GMV by region", "today": "2025-06-30", "mode": "llm"})
    assert len(api.service.calls) == 3  # another day or mode is another question


def test_follow_ups_bypass_the_cache_and_only_approval_clears_it(make_api) -> None:
    api = make_api(tokens={"boss": "cs_boss_token"}, scopes={"boss": {"admin"}})
    api.client.post("/v1/ask", json={"question": "GMV by region", "session_id": "s"})
    api.client.post("/v1/ask", json={"question": "GMV by region", "session_id": "s"})
    assert len(api.service.calls) == 2 and api.service.calls[-1]["previous"] is not None
    qid = api.client.post("/v1/ask", json={"question": "GMV by region"}).json()["query_id"]
    assert len(api.service.calls) == 2  # cached from the first (context-free) turn
    proposal = api.client.post("/v1/feedback", json={"query_id": qid, "verdict": "up"}).json()["proposal_id"]
    api.client.post("/v1/ask", json={"question": "GMV by region"})
    assert len(api.service.calls) == 2  # a proposal changes no answer
    api.client.post(f"/v1/feedback/proposals/{proposal}/approve", headers={"Authorization": "Bearer cs_boss_token"})
    api.client.post("/v1/ask", json={"question": "GMV by region"})
    assert len(api.service.calls) == 3


def test_answer_cache_can_be_turned_off(make_api) -> None:
    api = make_api(api_answer_cache_ttl_s=0)
    for _ in range(2):
        api.client.post("/v1/ask", json={"question": "GMV by region"})
    assert len(api.service.calls) == 2
