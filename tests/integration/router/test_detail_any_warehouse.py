"""The detail path on a warehouse that is not the demo: its own schema, table/column names, keys and Cube models.

Nothing in the code knows ``cs_shop2``: the catalog comes from the Cube model folder written here (plus a
glossary term and a small vocabulary file); every answer is checked against hand-written SQL.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from typing import Any

import psycopg
import pytest

from cube_models.model import load_model
from cubesage_core import db
from cubesage_core.llm import using_settings
from cubesage_core.settings import Settings
from router.detail import DetailEnv, DetailPlanError, EntityDirectory, run_detail
from router.detail.schema import DetailCatalog, build_catalog, glossary_terms, load_vocabulary
from router.sqlguard import GuardPolicy
from tests.llm_stub import dspy_reply, openai_stub

pytestmark = pytest.mark.integration
SCHEMA = "cs_shop2"

WAREHOUSE = f"""
CREATE SCHEMA {SCHEMA};
CREATE TABLE {SCHEMA}.members (mid integer PRIMARY KEY, full_name text NOT NULL, tier text NOT NULL,
                               joined_on date NOT NULL);
CREATE TABLE {SCHEMA}.tickets (ticket_no text PRIMARY KEY, owner integer NOT NULL REFERENCES {SCHEMA}.members,
                               state text NOT NULL, subject text NOT NULL, opened_at timestamp NOT NULL);
INSERT INTO {SCHEMA}.members VALUES (1, 'Ann Lee', 'gold', '2023-02-01'), (2, 'Bo Chen', 'silver', '2023-06-10'),
                                     (3, 'Ann Leeson', 'gold', '2024-01-05');
INSERT INTO {SCHEMA}.tickets VALUES
  ('T-01', 1, 'open', 'login fails', '2023-12-30 10:00'), ('T-02', 1, 'closed', 'refund please', '2024-01-02 09:00'),
  ('T-03', 1, 'open', 'slow page', '2024-02-14 12:00'), ('T-04', 1, 'closed', 'wrong invoice', '2024-03-31 23:30'),
  ('T-05', 1, 'open', 'password reset', '2024-04-01 00:10'), ('T-06', 2, 'open', 'cannot pay', '2024-02-01 08:00'),
  ('T-07', 2, 'closed', 'address change', '2024-03-03 15:00'), ('T-08', 3, 'open', 'app crash', '2024-02-20 11:00'),
  ('T-09', 3, 'closed', 'double charge', '2024-05-05 17:45');
GRANT USAGE ON SCHEMA {SCHEMA} TO cubesage_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA {SCHEMA} TO cubesage_reader;
"""

MODELS = {
    "members.yml": f"""
cubes:
  - name: members
    title: Members
    sql_table: {SCHEMA}.members
    joins:
      - name: tickets
        relationship: one_to_many
        sql: "{{CUBE}}.mid = {{tickets}}.owner"
    dimensions:
      - {{name: member_id, sql: mid, type: number, primary_key: true, public: true}}
      - {{name: full_name, sql: full_name, type: string}}
      - {{name: tier, sql: "{{CUBE}}.tier", type: string}}
      - {{name: joined_on, sql: joined_on, type: time}}
    measures:
      - {{name: count, type: count}}
""",
    "tickets.yml": f"""
cubes:
  - name: tickets
    title: Support tickets
    sql_table: {SCHEMA}.tickets
    meta: {{synonyms: [cases]}}
    joins:
      - name: members
        relationship: many_to_one
        sql: "{{CUBE}}.owner = {{members}}.mid"
    dimensions:
      - {{name: ticket_no, sql: ticket_no, type: string, primary_key: true, public: true}}
      - {{name: owner, sql: owner, type: number}}
      - {{name: status, sql: state, type: string}}
      - {{name: subject, sql: subject, type: string}}
      - {{name: opened_at, sql: "{{CUBE}}.opened_at", type: time}}
      - {{name: is_open, sql: "{{CUBE}}.state = 'open'", type: boolean}}
    measures:
      - {{name: count, type: count}}
""",
}

VOCABULARY = """
nouns:
  - {table: tickets, pattern: '工单'}
values:
  - {column: members.tier, value: gold, pattern: '\\bgold\\b|金卡'}
  - {column: fact_order.status, value: refunded, pattern: '\\brefunded\\b'}  # the demo's: no such table here
"""

ANN = (
    "SELECT t.ticket_no FROM cs_shop2.tickets t JOIN cs_shop2.members m ON m.mid = t.owner "
    "WHERE m.full_name = 'Ann Lee'"
)


@pytest.fixture(scope="module")
def shop2(pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, DetailCatalog]]:
    folder = tmp_path_factory.mktemp("shop2")
    (folder / "model").mkdir()
    for name, text in MODELS.items():
        (folder / "model" / name).write_text(text)
    (folder / "detail_vocabulary.yaml").write_text(VOCABULARY)
    with db.connection(pg_url) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
        conn.execute(WAREHOUSE)
    try:
        # a glossary term naming a value of tickets.status: written and read in one rolled-back transaction,
        # so no other test ever sees it
        with psycopg.connect(pg_url) as conn:
            conn.execute(
                "INSERT INTO semlayer.business_term (term_id, canonical_term, synonyms, language, mapped_asset_type,"
                " mapped_asset_id, filter_value) VALUES ('cs_shop2_open', 'open', %s, 'en', 'dimension',"
                " 'dimension:tickets.status', 'open')",
                (["unresolved", "未关闭"],),
            )
            terms = [t for t in glossary_terms(conn) if t["mapped_asset_id"] == "dimension:tickets.status"]
            conn.rollback()
        catalog = build_catalog(
            load_model(folder / "model"), vocabulary=load_vocabulary(folder / "detail_vocabulary.yaml"), terms=terms
        )
        yield pg_url, catalog
    finally:
        with db.connection(pg_url) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")


@pytest.fixture(scope="module")
def env(shop2: tuple[str, DetailCatalog]) -> DetailEnv:
    url, catalog = shop2
    with db.connection(url) as conn:
        directory = EntityDirectory.load(conn, catalog)
    policy = GuardPolicy(frozenset({f"{SCHEMA}.members", f"{SCHEMA}.tickets"}), default_schema=SCHEMA)
    return DetailEnv(directory=directory, policy=policy, warehouse=catalog)


def ask(url: str, env: DetailEnv, question: str, **kw: Any):
    with db.connection(url) as conn:
        return run_detail(
            question,
            conn=conn,
            env=env,
            language=kw.pop("language", "en"),
            entities=env.directory.match(question),
            recalled_tables=[],
            use_llm=kw.pop("use_llm", False),
            **kw,
        )


def gold(url: str, sql: str) -> list[str]:
    with db.connection(url) as conn:
        return sorted(r[0] for r in conn.execute(sql))


def test_catalog_is_derived_from_the_model(shop2: tuple[str, DetailCatalog]) -> None:
    _, catalog = shop2
    tickets, members = catalog.tables["tickets"], catalog.tables["members"]
    assert (tickets.schema, tickets.key, tickets.time) == (SCHEMA, "ticket_no", ("tickets", "opened_at"))
    assert (members.key, members.label, members.entity_type) == ("mid", "full_name", "member")
    assert [(e.child, e.column, e.parent, e.parent_column) for e in catalog.graph.edges] == [
        ("tickets", "owner", "members", "mid")
    ]  # declared on both cubes, one foreign key
    # the owner key shows the member's name; the boolean expression is no column
    assert tickets.display == (
        ("tickets", "ticket_no"),
        ("members", "full_name"),
        ("tickets", "state"),
        ("tickets", "subject"),
        ("tickets", "opened_at"),
    )
    assert {(w.table, w.column, w.value) for w in catalog.values} == {
        ("members", "tier", "gold"),
        ("tickets", "state", "open"),
    }


def test_tickets_of_a_member(shop2: tuple[str, DetailCatalog], env: DetailEnv) -> None:
    url, _ = shop2
    result = ask(url, env, "list the tickets of member Ann Lee")
    assert result.plan["target"] == "tickets" and [e.key_value for e in result.entities] == [1]  # not Ann Leeson
    assert "Ann Lee" not in result.sql and "cs_shop2.tickets" in result.sql and 1 in result.params.values()
    assert result.columns[:2] == ["ticket_no", "full_name"]
    assert sorted(r[0] for r in result.rows) == gold(url, ANN)


def test_value_word_from_the_glossary(shop2: tuple[str, DetailCatalog], env: DetailEnv) -> None:
    url, _ = shop2
    for question in ("show the open tickets of member Ann Lee", "Ann Lee 未关闭的工单"):
        result = ask(url, env, question, language="zh" if "工单" in question else "en")
        assert "'open'" not in result.sql and "open" in result.params.values()
        assert sorted(r[0] for r in result.rows) == gold(url, ANN + " AND t.state = 'open'")


def test_time_filter_on_the_models_time_dimension(shop2: tuple[str, DetailCatalog], env: DetailEnv) -> None:
    url, _ = shop2
    result = ask(url, env, "list the tickets of member Ann Lee", time_range=(date(2024, 1, 1), date(2024, 3, 31)))
    expected = gold(url, ANN + " AND t.opened_at >= '2024-01-01' AND t.opened_at < '2024-04-01'")
    assert sorted(r[0] for r in result.rows) == expected == ["T-02", "T-03", "T-04"]
    assert [r[0] for r in result.rows] == sorted(expected, reverse=True)  # newest first


def test_members_by_a_vocabulary_value_and_a_synonym(shop2: tuple[str, DetailCatalog], env: DetailEnv) -> None:
    url, _ = shop2
    members = ask(url, env, "list the gold members")
    assert sorted(r[0] for r in members.rows) == [1, 3]
    cases = ask(url, env, "cases of Bo Chen")  # meta.synonyms of the tickets cube
    assert sorted(r[0] for r in cases.rows) == ["T-06", "T-07"]


def test_unknown_tables_and_words_of_another_warehouse(shop2: tuple[str, DetailCatalog], env: DetailEnv) -> None:
    url, catalog = shop2
    assert not any(w.table == "fact_order" for w in catalog.values)  # the vocabulary's demo line is ignored
    with pytest.raises(DetailPlanError, match="no table named 'fact_order'"):
        ask(url, env, "show the fact_order table")
    with pytest.raises(DetailPlanError, match="no table, member to list"):
        ask(url, env, "list the refunded orders")


def test_llm_mode_sees_this_warehouse(shop2: tuple[str, DetailCatalog], env: DetailEnv) -> None:
    url, _ = shop2
    sql = "SELECT t.ticket_no FROM cs_shop2.tickets t WHERE t.owner = %(e0)s ORDER BY t.opened_at DESC LIMIT 50"
    with (
        openai_stub([dspy_reply(sql=sql)]) as stub,
        using_settings(Settings(llm_url=stub.url, llm_model="openai/stub")),
    ):
        result = ask(url, env, "list the tickets of member Ann Lee", use_llm=True)
        prompt = str(stub.requests[0])
    assert result.mode == "llm" and result.params == {"e0": 1}
    assert "cs_shop2.tickets(" in prompt and "cs_shop2.tickets.owner = cs_shop2.members.mid" in prompt
    assert sorted(r[0] for r in result.rows) == gold(url, ANN)
