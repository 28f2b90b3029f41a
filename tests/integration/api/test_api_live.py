"""The API over the real service, PostgreSQL and Cube: answers, audit log, sessions, feedback, keys."""

from __future__ import annotations

import json
import uuid

import httpx
import pytest

from answer import keys
from cubesage_core import db
from tests.live_api import LiveApi

pytestmark = pytest.mark.integration


def _events(text: str) -> list[tuple[str, dict]]:
    out = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        lines = block.strip().splitlines()
        if lines:
            name = next(line[6:].strip() for line in lines if line.startswith("event:"))
            out.append((name, json.loads("\n".join(line[5:].lstrip() for line in lines if line.startswith("data:")))))
    return out


def test_aggregate_answer_matches_the_warehouse_and_is_audited(live_api: LiveApi, pg_url: str) -> None:
    r = httpx.post(
        f"{live_api.url}/v1/ask",
        json={"question": "What was the order count in 2024?", "session_id": "it-audit"},
        timeout=60,
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["intent"] == "aggregate"
    with db.connection(pg_url) as conn:
        expected = conn.execute(
            "SELECT count(DISTINCT order_id) FROM warehouse.fact_order "
            "WHERE order_ts >= '2024-01-01' AND order_ts < '2025-01-01'"
        ).fetchone()[0]
        logged = conn.execute(
            "SELECT question, session_id, executed_sql FROM semlayer.query_log WHERE query_id = %s", (body["query_id"],)
        ).fetchone()
    numbers = [
        v
        for row in body["table"]["rows"]
        for v in (row if isinstance(row, list) else row.values())
        if isinstance(v, int | float)
    ]
    assert expected in numbers, (expected, body["table"])
    assert logged[0] == "What was the order count in 2024?" and logged[1] == "it-audit"
    stored = httpx.get(f"{live_api.url}/v1/queries/{body['query_id']}", timeout=10).json()
    assert stored["question"] == body["question"] and stored["intent"] == "aggregate"


def test_stream_reports_stages_in_order(live_api: LiveApi) -> None:
    r = httpx.post(f"{live_api.url}/v1/ask/stream", json={"question": "GMV by region in 2024"}, timeout=60)
    assert r.status_code == 200
    names = [name for name, _ in _events(r.text)]
    assert names[-1] == "answer" and names[0] == "intent"
    assert {"retrieval", "plan", "rows"} <= set(names)
    answer = _events(r.text)[-1][1]
    assert answer["table"]["rows"] and answer["intent"] == "aggregate"


def test_follow_up_reuses_the_previous_query(live_api: LiveApi, pg_url: str) -> None:
    session = f"it-{uuid.uuid4().hex[:8]}"
    first = httpx.post(
        f"{live_api.url}/v1/ask", json={"question": "GMV by region in 2024", "session_id": session}, timeout=60
    ).json()
    follow = httpx.post(f"{live_api.url}/v1/ask", json={"question": "只看华东", "session_id": session}, timeout=60)
    assert follow.status_code == 200, follow.text
    body = follow.json()
    measures_before = first["provenance"]["cube_query"]["measures"]
    assert body["provenance"].get("cube_query", {}).get("measures") == measures_before
    assert 0 < len(body["table"]["rows"]) < len(first["table"]["rows"])

    def ask(question: str) -> dict:
        return httpx.post(
            f"{live_api.url}/v1/ask", json={"question": question, "session_id": session}, timeout=60
        ).json()

    counts = ask("what about order count?")  # swaps the measure, keeps the East China filter and 2024
    assert counts["provenance"]["cube_query"]["measures"] == ["orders.count"]
    earlier = ask("and in 2023?")  # replaces the period, keeps the rest
    assert earlier["provenance"]["cube_query"]["timeDimensions"][0]["dateRange"] == ["2023-01-01", "2023-12-31"]
    with db.connection(pg_url) as conn:
        expected = {
            year: conn.execute(
                "SELECT count(*) FROM warehouse.fact_order o JOIN warehouse.dim_region r USING (region_id) "
                "WHERE r.region_code = 'east' AND o.order_ts >= %s AND o.order_ts < %s",
                (f"{year}-01-01", f"{year + 1}-01-01"),
            ).fetchone()[0]
            for year in (2023, 2024)
        }
    assert [row[-1] for row in counts["table"]["rows"]] == [expected[2024]]
    assert [row[-1] for row in earlier["table"]["rows"]] == [expected[2023]]
    assert "2023" in earlier["text"]


def test_nl2cube_does_not_execute_unless_asked(live_api: LiveApi) -> None:
    plain = httpx.post(f"{live_api.url}/v1/nl2cube", json={"question": "GMV by month in 2024"}, timeout=60)
    assert plain.status_code == 200, plain.text
    assert "order_items.gmv" in plain.json()["cube_query"]["measures"] and plain.json()["rows"] is None
    ran = httpx.post(
        f"{live_api.url}/v1/nl2cube", json={"question": "GMV by month in 2024", "run": True}, timeout=60
    ).json()
    assert len(ran["rows"]) == 12


def test_feedback_is_a_proposal_until_an_admin_approves_it(live_api: LiveApi, pg_url: str) -> None:
    question = f"GMV by channel in 2024 ({uuid.uuid4().hex[:6]})"
    answer = httpx.post(f"{live_api.url}/v1/ask", json={"question": question}, timeout=60).json()
    bad = httpx.post(
        f"{live_api.url}/v1/feedback",
        json={
            "query_id": answer["query_id"],
            "verdict": "down",
            "corrected_cube_query": {"measures": ["orders.no_such_measure"]},
        },
        timeout=30,
    )
    assert bad.status_code == 422 and "no_such_measure" in bad.json()["detail"]
    evil = httpx.post(
        f"{live_api.url}/v1/feedback",
        json={"query_id": answer["query_id"], "verdict": "down", "corrected_sql": "DELETE FROM warehouse.fact_order"},
        timeout=30,
    )
    assert evil.status_code == 422
    good = httpx.post(f"{live_api.url}/v1/feedback", json={"query_id": answer["query_id"], "verdict": "up"}, timeout=30)
    assert good.status_code == 200, good.text
    assert good.json()["learned"] is False and good.json()["status"] == "pending"
    proposal_id = good.json()["proposal_id"]

    def cached() -> list[tuple]:
        with db.connection(pg_url) as conn:
            return conn.execute(
                "SELECT approved, cube_query FROM semlayer.dynamic_few_shot_cache WHERE question = %s", (question,)
            ).fetchall()

    assert cached() == []  # unreviewed: nothing reaches engine D
    approve = f"{live_api.url}/v1/feedback/proposals/{proposal_id}/approve"
    assert httpx.post(approve, timeout=30).status_code == 401  # keyless mode is never admin
    asker, asker_token = keys.create_key(pg_url, f"it-asker-{uuid.uuid4().hex[:6]}")
    admin, admin_token = keys.create_key(pg_url, f"it-admin-{uuid.uuid4().hex[:6]}", ["admin"])
    try:
        assert httpx.post(approve, headers={"Authorization": f"Bearer {asker_token}"}, timeout=30).status_code == 403
        assert cached() == []
        done = httpx.post(approve, headers={"Authorization": f"Bearer {admin_token}"}, timeout=60)
        assert done.status_code == 200 and done.json()["status"] == "approved", done.text
        assert done.json()["reviewed_by"] == f"key:{admin.key_id}"
    finally:
        keys.revoke_key(pg_url, asker.key_id)
        keys.revoke_key(pg_url, admin.key_id)
    assert cached() == [(True, answer["provenance"]["cube_query"])]
    with db.connection(pg_url) as conn:
        feedback = conn.execute(
            "SELECT feedback FROM semlayer.query_log WHERE query_id = %s", (answer["query_id"],)
        ).fetchone()[0]
    assert feedback["verdict"] == "up" and feedback["proposal_id"] == proposal_id


def test_hostile_questions_never_500_and_leave_the_warehouse_intact(live_api: LiveApi, pg_url: str) -> None:
    with db.connection(pg_url) as conn:
        before = conn.execute("SELECT count(*) FROM warehouse.fact_order").fetchone()[0]
    for question in (
        "list orders; drop table warehouse.fact_order",
        "' OR 1=1; --",
        "SELECT pg_sleep(10)",
        "x" * 5000,
        "what's the weather in Shanghai?",
        "🙂" * 20,
        "订单\x00",
    ):
        r = httpx.post(f"{live_api.url}/v1/ask", json={"question": question}, timeout=60)
        assert r.status_code < 500, (question, r.text)
        assert "Traceback" not in r.text
    with db.connection(pg_url) as conn:
        assert conn.execute("SELECT count(*) FROM warehouse.fact_order").fetchone()[0] == before


def test_catalog_and_readiness(live_api: LiveApi) -> None:
    catalog = httpx.get(f"{live_api.url}/v1/catalog", timeout=10).json()
    assert "order_items.gmv" in {m["name"] for m in catalog["metrics"]}
    assert any(t["definition"] for t in catalog["terms"])
    ready = httpx.get(f"{live_api.url}/readyz", timeout=10)
    assert ready.status_code == 200 and ready.json()["checks"]["cube"]["ok"] is True


def test_api_keys_hashed_required_and_revocable(pg_url: str) -> None:
    from answer.api import create_app
    from answer.api.store import PostgresStore
    from tests.live_api import api_settings
    from tests.serve_app import serve_in_thread
    from tests.unit.api.fakes import FakeKnowledge, FakeService

    name = f"it-key-{uuid.uuid4().hex[:6]}"
    key, token = keys.create_key(pg_url, name)
    with db.connection(pg_url) as conn:
        stored = conn.execute("SELECT token_sha256 FROM semlayer.api_key WHERE key_id = %s", (key.key_id,)).fetchone()[
            0
        ]
    assert stored == keys.hash_token(token) and token not in stored
    store = PostgresStore(pg_url)
    store.KEY_CACHE_S = 0.0
    app = create_app(api_settings(pg_url, api_host="0.0.0.0"), FakeService(), store=store, knowledge=FakeKnowledge())
    with serve_in_thread(app) as url:
        assert httpx.get(f"{url}/v1/catalog", timeout=10).status_code == 401
        auth = {"Authorization": f"Bearer {token}"}
        ok = httpx.post(f"{url}/v1/ask", json={"question": "GMV"}, headers=auth, timeout=10)
        assert ok.status_code == 200
        with db.connection(pg_url) as conn:
            logged = conn.execute(
                "SELECT api_key_id FROM semlayer.query_log WHERE query_id = %s", (ok.json()["query_id"],)
            ).fetchone()[0]
        assert logged == key.key_id
        keys.revoke_key(pg_url, name)
        assert httpx.get(f"{url}/v1/catalog", headers=auth, timeout=10).status_code == 401
    assert name not in {k.name for k in keys.list_keys(pg_url)}


def test_ingest_is_validated_idempotent_and_reports_changes(live_api: LiveApi, pg_url: str, tmp_path) -> None:
    import shutil

    from answer.api import create_app
    from cubesage_core.settings import REPO_ROOT
    from tests.live_api import api_settings
    from tests.serve_app import serve_in_thread

    model_dir = tmp_path / "model"
    shutil.copytree(REPO_ROOT / "demo" / "model", model_dir)
    settings = api_settings(pg_url, model_dir=model_dir, api_ingest_requires_key=False)
    app = create_app(settings, live_api.service, database_url=db.api_url(settings, pg_url))
    tag = uuid.uuid4().hex[:6]
    with serve_in_thread(app) as url:
        doc = {
            "name": f"it-wiki-{tag}",
            "format": "markdown",
            "content": f"# Loyalty program {tag}\nThe loyalty program {tag} gives vip customers points.",
        }
        first = httpx.post(f"{url}/v1/ingest/wiki", json={"documents": [doc]}, timeout=120)
        assert first.status_code == 200, first.text
        assert first.json()["added"] >= 1
        again = httpx.post(f"{url}/v1/ingest/wiki", json={"documents": [doc]}, timeout=120).json()
        assert again["added"] == 0 and again["unchanged"] == first.json()["added"]

        same = [{"name": p.name, "content": p.read_text()} for p in sorted(model_dir.glob("*.yml"))[:1]]
        models = httpx.post(f"{url}/v1/ingest/cube-models", json={"files": same}, timeout=120)
        assert models.status_code == 200, models.text
        assert (models.json()["added"], models.json()["updated"], models.json()["removed"]) == (0, 0, 0)
        broken_yaml = (
            "cubes:\n  - name: broken\n    sql_table: warehouse.nope\n    measures:\n"
            '      - name: total\n        type: sum\n        sql: "{CUBE}.missing + {other.x}"\n'
        )
        broken = [{"name": "broken.yml", "content": broken_yaml}]
        refused = httpx.post(f"{url}/v1/ingest/cube-models", json={"files": broken}, timeout=60)
        assert refused.status_code == 422, refused.text
        assert not (model_dir / "broken.yml").exists()

        glossary = {
            "format": "yaml",
            "content": f"terms:\n  - id: it_term_{tag}\n    term: zebra score {tag}\n"
            "    maps_to: metric:order_items.gmv\n    language: en\n    definition: test term\n",
        }
        g = httpx.post(f"{url}/v1/ingest/glossary", json=glossary, timeout=60)
        assert g.status_code == 200, g.text
        bad = httpx.post(f"{url}/v1/ingest/glossary", json={"format": "yaml", "content": "terms: [{x: 1}]"}, timeout=60)
        assert bad.status_code == 422, bad.text
    with db.connection(pg_url) as conn:
        assert (
            conn.execute(
                "SELECT count(*) FROM semlayer.business_term WHERE canonical_term = %s", (f"zebra score {tag}",)
            ).fetchone()[0]
            == 1
        )


PRICE_CUBE = """cubes:
  - name: price_points
    sql_table: warehouse.dim_product
    title: Price points
    description: List prices of the catalogue.
    joins:
      - name: products
        relationship: one_to_one
        sql: "{CUBE}.product_id = {products}.product_id"
    dimensions:
      - {name: product_id, sql: product_id, type: number, primary_key: true}
    measures:
      - {name: max_list_price, type: max, sql: unit_price, title: Highest list price,
         description: The highest list price}
"""


def test_ingested_cube_models_are_used_without_a_restart(demo_ready, pg_url: str, tmp_path) -> None:
    import shutil

    from cube_models.export import export_assets
    from cube_models.model import load_model
    from cubesage_core.settings import REPO_ROOT
    from tests.live_api import api_settings, running_api

    model_dir = tmp_path / "model"
    shutil.copytree(REPO_ROOT / "demo" / "model", model_dir)
    term_id = f"it_price_ceiling_{uuid.uuid4().hex[:6]}"
    question = {"question": "catalogue price ceiling by brand"}
    try:
        with running_api(api_settings(pg_url, model_dir=model_dir, api_ingest_requires_key=False), pg_url) as api:
            glossary = {
                "format": "yaml",
                "content": f"terms:\n  - id: {term_id}\n    term: catalogue price ceiling\n"
                "    maps_to: metric:price_points.max_list_price\n    language: en\n",
            }
            assert httpx.post(f"{api.url}/v1/ingest/glossary", json=glossary, timeout=60).status_code == 200
            before = httpx.post(f"{api.url}/v1/ask", json=question, timeout=60).json()
            assert before["provenance"]["cube_query"] is None and not before["table"]["rows"]

            files = {"files": [{"name": "price_points.yml", "content": PRICE_CUBE}]}
            models = httpx.post(f"{api.url}/v1/ingest/cube-models", json=files, timeout=120)
            assert models.status_code == 200 and models.json()["added"] >= 1, models.text
            after = httpx.post(f"{api.url}/v1/ask", json=question, timeout=60).json()
            assert after["provenance"]["cube_query"]["measures"] == ["price_points.max_list_price"]
            with db.connection(pg_url) as conn:
                expected = conn.execute(
                    "SELECT brand, max(unit_price)::float FROM warehouse.dim_product "
                    "GROUP BY brand ORDER BY 2 DESC, 1 LIMIT 3"
                ).fetchall()
            assert [tuple(row) for row in after["table"]["rows"][:3]] == [tuple(r) for r in expected]
            # no glossary term: the metric's own title is found by engine V (above its threshold)
            plain = httpx.post(
                f"{api.url}/v1/ask", json={"question": "highest list price per category"}, timeout=60
            ).json()
            assert plain["provenance"]["cube_query"]["measures"] == ["price_points.max_list_price"]
            assert plain["provenance"]["cube_query"]["dimensions"] == ["products.category"]
    finally:  # the shared database goes back to the demo model and glossary
        export_assets(pg_url, load_model(REPO_ROOT / "demo" / "model"))
        with db.connection(pg_url) as conn:
            conn.execute("DELETE FROM semlayer.business_term WHERE term_id = %s", (term_id,))
            conn.execute("DELETE FROM semlayer.asset WHERE asset_id = %s", (f"term:{term_id}",))


@pytest.mark.parametrize(
    ("question", "sql"),
    [
        (
            "Li Wei's total spend",
            "SELECT sum(i.amount)::float FROM warehouse.fact_order_item i JOIN warehouse.fact_order o USING (order_id) "
            "JOIN warehouse.dim_customer c USING (customer_id) "
            "WHERE c.customer_name = 'Li Wei' AND o.status = 'completed'",
        ),
        (
            "Aurora X1 headphones units sold in 2024",
            "SELECT sum(i.quantity)::float FROM warehouse.fact_order_item i "
            "JOIN warehouse.fact_order o USING (order_id) JOIN warehouse.dim_product p USING (product_id) "
            "WHERE p.product_name = 'Aurora X1 headphones' "
            "AND o.status = 'completed' AND o.order_ts >= '2024-01-01' AND o.order_ts < '2025-01-01'",
        ),
    ],
)
def test_a_named_customer_or_product_filters_the_aggregate(
    live_api: LiveApi, pg_url: str, question: str, sql: str
) -> None:
    body = httpx.post(f"{live_api.url}/v1/ask", json={"question": question}, timeout=60).json()
    assert body["intent"] == "aggregate", body["text"]
    with db.connection(pg_url) as conn:
        expected = conn.execute(sql).fetchone()[0]
    # one row, shown by its key and name beside the number (the reader sees which customer or product)
    assert [row[-1] for row in body["table"]["rows"]] == [pytest.approx(expected)]
    assert len(body["table"]["rows"][0]) == 3


def test_an_amount_bound_filters_the_listed_rows(live_api: LiveApi, pg_url: str) -> None:
    body = httpx.post(f"{live_api.url}/v1/ask", json={"question": "张敏超过500元的支付记录"}, timeout=60).json()
    assert body["intent"] == "detail", body["text"]
    with db.connection(pg_url) as conn:
        expected = sorted(
            r[0]
            for r in conn.execute(
                "SELECT p.payment_id FROM warehouse.fact_payment p JOIN warehouse.fact_order o USING (order_id) "
                "JOIN warehouse.dim_customer c USING (customer_id) WHERE c.customer_name = '张敏' AND p.amount > 500"
            )
        )
    ids = sorted(row[body["table"]["columns"].index("payment_id")] for row in body["table"]["rows"])
    assert ids == expected and expected


def test_a_bound_on_a_count_is_a_having(live_api: LiveApi, pg_url: str) -> None:
    """Customers are told apart by their key: namesakes are two rows, each shown with its key."""
    body = httpx.post(
        f"{live_api.url}/v1/ask", json={"question": "customers with more than 14 orders"}, timeout=60
    ).json()
    assert body["intent"] == "aggregate", body["text"]
    with db.connection(pg_url) as conn:
        expected = sorted(
            conn.execute(
                "SELECT c.customer_id, c.customer_name, count(*) FROM warehouse.fact_order o "
                "JOIN warehouse.dim_customer c USING (customer_id) GROUP BY 1, 2 HAVING count(*) > 14"
            ).fetchall()
        )
    assert sorted(tuple(r) for r in body["table"]["rows"]) == [tuple(r) for r in expected] and expected


def test_a_dimension_value_named_in_the_question_filters_the_aggregate(live_api: LiveApi, pg_url: str) -> None:
    body = httpx.post(
        f"{live_api.url}/v1/ask", json={"question": "how many products does the Pulse brand have?"}, timeout=60
    ).json()
    with db.connection(pg_url) as conn:
        expected = conn.execute("SELECT count(*) FROM warehouse.dim_product WHERE brand = 'Pulse'").fetchone()[0]
    assert body["provenance"]["cube_query"]["filters"] == [
        {"member": "products.brand", "operator": "equals", "values": ["Pulse"]}
    ]
    assert body["table"]["rows"] == [[expected]]
