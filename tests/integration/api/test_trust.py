"""Trust boundaries against the real database and service: the API's role, key scopes and their migration,
ingest (scope, warehouse schemas, YAML limits, content types, Host), and feedback review feeding engine D."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

from answer import feedback, keys
from cubesage_core import db
from tests.live_api import LiveApi, api_settings, running_api

pytestmark = pytest.mark.integration


def test_the_api_role_has_no_superuser_rights(demo_ready: Any, pg_url: str) -> None:
    url = db.api_url(api_settings(pg_url), pg_url)
    with db.connection(url) as conn:
        user, superuser, createrole, createdb = conn.execute(
            "SELECT current_user, rolsuper, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = current_user"
        ).fetchone()
        assert (user, superuser, createrole, createdb) == (db.API_ROLE, False, False, False)
        assert conn.execute("SELECT count(*) FROM warehouse.fact_order").fetchone()[0] > 0
        assert conn.execute("SELECT count(*) FROM semlayer.api_key").fetchone()[0] >= 0
        for statement in (
            "INSERT INTO semlayer.api_key (key_id, name, token_sha256) VALUES ('x', 'x', 'x')",
            "DELETE FROM semlayer.api_key",
            "UPDATE warehouse.fact_order SET status = 'x'",
            "CREATE TABLE warehouse.intruder (id int)",
            "DROP TABLE semlayer.query_log",
            "CREATE ROLE intruder SUPERUSER",
            "SELECT pg_read_file('postgresql.conf')",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(statement)
        conn.execute("BEGIN")
        conn.execute(f"SET LOCAL ROLE {db.READER_ROLE}")  # generated SQL still runs under the reader role
        conn.execute("ROLLBACK")


def test_a_superuser_url_is_refused_for_the_api(pg_url: str) -> None:
    from pydantic import SecretStr

    with pytest.raises(db.DatabaseSetupError, match="superuser"):
        db.api_url(api_settings(pg_url, api_database_url=SecretStr(pg_url)), pg_url)


OLD_API_KEY_TABLE = """CREATE SCHEMA IF NOT EXISTS semlayer;
CREATE TABLE semlayer.api_key (key_id text PRIMARY KEY, name text NOT NULL, token_sha256 text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now(), revoked_at timestamptz, last_used_at timestamptz);
INSERT INTO semlayer.api_key (key_id, name, token_sha256) VALUES ('old1', 'old key', 'abc');"""


def test_keys_made_before_scopes_keep_ask_and_ingest(pg_url: str) -> None:
    name = f"cs_migrate_{uuid.uuid4().hex[:8]}"
    with db.connection(pg_url) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = make_conninfo(pg_url, dbname=name)
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(OLD_API_KEY_TABLE)
        db.apply_schema(url, ["warehouse"])
        db.apply_schema(url, ["warehouse"])  # idempotent
        created, _ = keys.create_key(url, "new key")
        scopes = {k.key_id: k.scopes for k in keys.list_keys(url)}
        assert scopes == {"old1": ("ask", "ingest"), created.key_id: ("ask",)}
        assert keys.set_scopes(url, "new key", ["admin"]).scopes == ("admin",)
        with db.connection(url) as conn, pytest.raises(psycopg.errors.CheckViolation):
            conn.execute("UPDATE semlayer.api_key SET scopes = ARRAY['root'] WHERE key_id = 'old1'")
    finally:
        with db.connection(pg_url) as conn:
            conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture
def ingest_api(demo_ready: Any, pg_url: str, tmp_path) -> Any:
    import shutil

    from cubesage_core.settings import REPO_ROOT

    model_dir = tmp_path / "model"
    shutil.copytree(REPO_ROOT / "demo" / "model", model_dir)
    feeder, token = keys.create_key(pg_url, f"it-feeder-{uuid.uuid4().hex[:6]}", ["ingest"])
    with running_api(api_settings(pg_url, model_dir=model_dir), pg_url) as api:
        yield api, {"Authorization": f"Bearer {token}"}, model_dir
    keys.revoke_key(pg_url, feeder.key_id)


ROLES_CUBE = (
    "cubes:\n  - name: roles\n    sql_table: pg_catalog.pg_roles\n    dimensions:\n"
    "      - {name: rolname, sql: rolname, type: string, primary_key: true}\n"
    "    measures:\n      - {name: count, type: count}\n"
)
SECRET_DIMENSION = (
    "cubes:\n  - name: sneaky\n    sql_table: warehouse.dim_region\n    dimensions:\n"
    "      - {name: region_id, sql: region_id, type: number, primary_key: true}\n"
    "      - {name: secret, type: string,\n"
    '         sql: "(SELECT token_sha256 FROM semlayer.api_key LIMIT 1)"}\n'
    "    measures:\n      - {name: count, type: count}\n"
)
LAUGHS = "\n".join(
    [f"a: &a [{', '.join(['lol'] * 9)}]"]
    + [f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]" for p, c in zip("abcdefgh", "bcdefghi", strict=True)]
)


def _assets(pg_url: str) -> list[tuple]:
    with db.connection(pg_url) as conn:
        return conn.execute("SELECT asset_id, content_hash FROM semlayer.asset ORDER BY 1").fetchall()


def test_ingest_is_a_trust_boundary(ingest_api: Any, pg_url: str) -> None:
    api, auth, model_dir = ingest_api
    assets = _assets(pg_url)
    roles = {"files": [{"name": "roles.yml", "content": ROLES_CUBE}]}
    assert httpx.post(f"{api.url}/v1/ingest/cube-models", json=roles, timeout=60).status_code == 401
    for files in (roles, {"files": [{"name": "sneaky.yml", "content": SECRET_DIMENSION}]}):
        refused = httpx.post(f"{api.url}/v1/ingest/cube-models", json=files, headers=auth, timeout=60)
        assert refused.status_code == 422 and "outside the warehouse schemas" in refused.json()["detail"], refused.text
    assert not (model_dir / "roles.yml").exists() and not (model_dir / "sneaky.yml").exists()
    laughs = httpx.post(
        f"{api.url}/v1/ingest/glossary", json={"format": "yaml", "content": LAUGHS}, headers=auth, timeout=60
    )
    assert laughs.status_code == 422 and "expands" in laughs.json()["detail"]  # refused before expanding it
    plain = httpx.post(
        f"{api.url}/v1/ingest/wiki",
        headers={**auth, "Content-Type": "text/plain"},
        content='{"documents": [{"name": "x", "content": "# x"}]}',
        timeout=30,
    )
    assert plain.status_code == 415
    rebound = httpx.post(f"{api.url}/v1/ask", json={"question": "GMV"}, headers={"Host": "evil.example"}, timeout=30)
    assert rebound.status_code == 403
    assert _assets(pg_url) == assets  # nothing refused changed the semantic layer


def test_feedback_sql_is_guarded_by_the_configured_schemas_and_run(live_api: LiveApi) -> None:
    answer = httpx.post(f"{live_api.url}/v1/ask", json={"question": "order count in 2024"}, timeout=60).json()

    def propose(**correction: Any) -> httpx.Response:
        return httpx.post(
            f"{live_api.url}/v1/feedback",
            json={"query_id": answer["query_id"], "verdict": "down", **correction},
            timeout=60,
        )

    for bad_sql in (
        "SELECT token_sha256 FROM semlayer.api_key",
        "SELECT rolname FROM pg_catalog.pg_roles",
        "SELECT * FROM pg_roles",
    ):
        refused = propose(corrected_sql=bad_sql)
        assert refused.status_code == 422, refused.text
    runs_not = propose(
        corrected_cube_query={
            "measures": ["orders.count"],
            "filters": [{"member": "orders.order_id", "operator": "equals", "values": ["not a number"]}],
        }
    )
    assert runs_not.status_code == 422 and "does not run" in runs_not.json()["detail"], runs_not.text
    ok = propose(corrected_sql="SELECT count(*) FROM warehouse.fact_order")
    assert ok.status_code == 200 and ok.json()["status"] == "pending", ok.text


def test_engine_d_sees_a_proposal_only_after_approval(demo_ready: Any, live_api: LiveApi, pg_url: str) -> None:
    from cubesage_core.settings import get_settings
    from fourengine.retrieve import Retriever

    question = f"number of orders placed through each sales channel ({uuid.uuid4().hex[:6]})"
    answer = httpx.post(f"{live_api.url}/v1/ask", json={"question": question}, timeout=60).json()
    correction = {"measures": ["orders.count"], "dimensions": ["orders.channel"]}
    proposed = httpx.post(
        f"{live_api.url}/v1/feedback",
        json={"query_id": answer["query_id"], "verdict": "down", "corrected_cube_query": correction},
        timeout=60,
    ).json()
    retriever = Retriever(pg_url)
    try:

        def few_shots() -> list[str]:
            return [f.question for f in retriever.retrieve_sync(question).few_shots]

        assert question not in few_shots()
        settings = api_settings(pg_url, model_dir=get_settings().model_folder())
        approved = feedback.approve(
            pg_url, proposed["proposal_id"], reviewer="it", validator=feedback.ModelValidator(settings, pg_url)
        )
        assert approved.status == "approved" and approved.cache_id
        assert question in few_shots()
        with pytest.raises(feedback.ProposalError, match="not pending"):
            feedback.reject(pg_url, proposed["proposal_id"], reviewer="it")
    finally:
        retriever.close()
        with db.connection(pg_url) as conn:
            conn.execute("DELETE FROM semlayer.dynamic_few_shot_cache WHERE question = %s", (question,))


def test_setup_gives_the_api_role_the_configured_password(pg_url: str) -> None:
    from pydantic import SecretStr

    settings = api_settings(
        pg_url, api_database_url=SecretStr(make_conninfo(db.with_user(pg_url, db.API_ROLE), password="s3cret-pass"))
    )
    try:
        db.set_api_password(pg_url, settings)
        with db.connection(pg_url) as conn:
            hashed = conn.execute("SELECT rolpassword FROM pg_authid WHERE rolname = %s", (db.API_ROLE,)).fetchone()[0]
        assert hashed and "s3cret-pass" not in hashed
        assert db.api_url(settings, pg_url)  # and the API connects with it
    finally:
        with db.connection(pg_url) as conn:
            conn.execute(sql.SQL("ALTER ROLE {} PASSWORD NULL").format(sql.Identifier(db.API_ROLE)))


async def test_key_lookups_write_at_most_once_a_minute_and_never_for_bad_tokens(pg_url: str) -> None:
    from answer.api.store import PostgresStore

    key, token = keys.create_key(pg_url, f"it-lookup-{uuid.uuid4().hex[:6]}", ["ask", "ingest"])
    store = PostgresStore(db.api_url(api_settings(pg_url), pg_url))
    store.KEY_CACHE_S = 0.0
    await store.open()

    def row_version() -> tuple:
        with db.connection(pg_url) as conn:
            return conn.execute(
                "SELECT xmin::text, last_used_at FROM semlayer.api_key WHERE key_id = %s", (key.key_id,)
            ).fetchone()

    try:
        grant = await store.key_for(token)
        assert grant is not None and grant.key_id == key.key_id and grant.scopes == {"ask", "ingest"}
        first = row_version()
        assert first[1] is not None  # the first use is recorded
        for i in range(5):
            assert await store.key_for(token) is not None
            assert await store.key_for(f"cs_bad_{i}_{uuid.uuid4().hex}") is None
        assert row_version() == first  # no write: same row version
    finally:
        await store.close()
        keys.revoke_key(pg_url, key.key_id)
