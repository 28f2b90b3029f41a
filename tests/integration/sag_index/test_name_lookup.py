"""Entity names and row names served from PostgreSQL indexes (sag.entity_name, sag.entity + pg_trgm)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from answer.bootstrap import warehouse_map_of
from cubesage_core import db
from cubesage_core.settings import REPO_ROOT
from router.detail.entities import EntityDirectory
from sag_index import entity_names, row_lookup
from sag_index.warehouse import index_warehouse

pytestmark = pytest.mark.integration
SCHEMA = "names_it"


@dataclass(frozen=True)
class Spec:
    table: str
    schema: str = SCHEMA
    key: str = "member_id"
    label: str | None = "full_name"
    name_columns: tuple[str, ...] = ("full_name", "nickname")
    prefix_words: int = 0
    suffixes: tuple[tuple[str, str], ...] = ()
    entity_type: str = "member"
    name_parts: tuple[str, ...] = ()


@dataclass(frozen=True)
class Catalog:
    entity_tables: list[Spec]


@pytest.fixture(scope="module")
def members(pg_url: str) -> Iterator[str]:
    with db.connection(pg_url) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
        conn.execute(f"CREATE SCHEMA {SCHEMA}")
        conn.execute(f"CREATE TABLE {SCHEMA}.members (member_id int PRIMARY KEY, full_name text, nickname text)")
        conn.execute(
            f"INSERT INTO {SCHEMA}.members VALUES (1, 'Ada Lovelace', 'Countess'), (2, '张三丰', NULL), "
            "(3, 'Alan Turing', 'Prof')"
        )
    yield pg_url
    with db.connection(pg_url) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
        conn.execute("DELETE FROM sag.entity_name_source WHERE source LIKE %s", (f"{SCHEMA}.%",))
        conn.execute("DELETE FROM sag.entity_name WHERE source LIKE %s", (f"{SCHEMA}.%",))


def test_names_are_indexed_once_and_rebuilt_when_the_table_changes(members: str) -> None:
    catalog = Catalog([Spec("members")])
    with db.connection(members) as conn:
        assert entity_names.refresh(conn, catalog.entity_tables) == {f"{SCHEMA}.members": 5}
        assert entity_names.refresh(conn, catalog.entity_tables) == {f"{SCHEMA}.members": None}  # unchanged
        directory = EntityDirectory.load(conn, catalog)
    assert [(m.key_value, m.label) for m in directory.match("orders of ada lovelace and 张三丰")] == [
        (1, "Ada Lovelace"),
        (2, "张三丰"),
    ]
    assert directory.match("orders of the Countess")[0].key_value == 1  # another name column
    assert directory.match("Sir Ada Lovelaced") == []  # word-bounded
    with db.connection(members) as conn:
        conn.execute(f"UPDATE {SCHEMA}.members SET full_name = 'Grace Hopper' WHERE member_id = 3")
    with db.connection(members) as conn:
        directory = EntityDirectory.load(conn, catalog)
    assert [m.key_value for m in directory.match("what did Grace Hopper buy")] == [3]
    assert directory.match("what did Alan Turing buy") == []


def test_a_name_written_over_columns_is_named_whole_and_a_part_alone_names_no_row(members: str) -> None:
    with db.connection(members) as conn:
        conn.execute(f"CREATE TABLE {SCHEMA}.players (player_id text PRIMARY KEY, first text, last text)")
        conn.execute(f"INSERT INTO {SCHEMA}.players VALUES ('a1', 'By', 'Speece'), ('t1', 'Mike', 'Trout')")
        spec = Spec("players", key="player_id", label="first", name_columns=("first",), name_parts=("first", "last"))
        directory = EntityDirectory.load(conn, Catalog([spec]))
    assert [(m.key_value, m.label) for m in directory.match("Mike Trout's batting average")] == [("t1", "Mike Trout")]
    assert directory.match("top 5 teams by wins") == [] and directory.match("how did Mike do") == []


def test_a_table_no_longer_in_the_catalog_loses_its_names(members: str) -> None:
    with db.connection(members) as conn:
        EntityDirectory.load(conn, Catalog([Spec("members")]))
        EntityDirectory.load(conn, Catalog([]))
        left = conn.execute("SELECT count(*) FROM sag.entity_name WHERE source = %s", (f"{SCHEMA}.members",))
        assert left.fetchone()[0] == 0


def test_row_names_are_found_exactly_and_by_trigrams(pg_url: str) -> None:
    index_warehouse(pg_url, warehouse_map_of(pg_url), REPO_ROOT / "demo" / "wiki")
    with db.connection(pg_url) as conn:
        names, rows = row_lookup.named_rows(conn, ["aurora x1 headphones", "no such thing"])
        assert list(names) == ["aurora x1 headphones"]
        assert rows[names["aurora x1 headphones"]][0]["entity_type"] == "product"
        near = row_lookup.near_names(conn, ["aurora x1 headphone"])
        assert names["aurora x1 headphones"] in near
        assert row_lookup.near_names(conn, ["zzqqxx"]) == []
