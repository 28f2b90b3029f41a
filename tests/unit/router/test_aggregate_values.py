"""Dimension values named in a question become filters; words inside other words and ordinary words do not."""

from __future__ import annotations

from pathlib import Path

from cube_models.model import load_model
from router.aggregate.values import ValueIndex, _indexed_dimensions, _sources


def index() -> ValueIndex:
    values = ValueIndex()
    for member, value in [
        ("products.brand", "Pulse"),
        ("products.brand", "Aurora"),
        ("customers.city", "杭州 Hangzhou"),
        ("refunds.reason", "other"),
        ("orders.channel", "web"),
        ("products.category", "home"),
    ]:
        values.add(member, value)
    return values


def test_values_words_of_bilingual_values_and_word_bounds() -> None:
    assert index().filters("how many products does the Pulse brand have?", set()) == [
        {"member": "products.brand", "operator": "equals", "values": ["Pulse"]}
    ]
    assert index().filters("GMV of customers in 杭州", set()) == [
        {"member": "customers.city", "operator": "equals", "values": ["杭州 Hangzhou"]}
    ]
    assert index().filters("impulse buys", set()) == []  # not inside another word
    assert index().filters("refunds for other reasons", set()) == []  # an ordinary word


def test_members_the_glossary_binds_keep_the_glossarys_meaning() -> None:
    assert index().filters("GMV of web orders in home", {"orders.channel", "products.category"}) == []
    both = index().filters("Pulse and Aurora GMV", set())
    assert both == [{"member": "products.brand", "operator": "equals", "values": ["Aurora", "Pulse"]}]


def test_words_the_glossary_read_as_values_are_not_read_again() -> None:
    values = ValueIndex()
    values.add("regions.name_zh", "华东")
    values.add("products.brand", "Pulse")
    assert values.filters("top brands in 华东 by GMV", set(), {"华东"}) == []
    assert values.filters("Pulse GMV in 华东", set(), {"华东"}) == [
        {"member": "products.brand", "operator": "equals", "values": ["Pulse"]}
    ]


def test_a_select_cubes_columns_are_traced_to_the_tables_each_branch_reads() -> None:
    sql = (
        "SELECT o.channel, 'sale' AS kind, o.status FROM s.lines l JOIN s.orders o ON o.id = l.order_id "
        "WHERE o.status = 'done' UNION ALL SELECT channel, 'refund' AS kind, status FROM s.returns"
    )
    assert _sources(sql, "channel") == [("s", "orders", "channel"), ("s", "returns", "channel")]
    assert _sources(sql, "kind") == ["sale", "refund"]
    assert _sources(sql, "status") is None  # the first branch keeps only some of its values
    assert _sources("SELECT upper(c) AS c FROM s.t", "c") is None  # computed
    assert _sources("SELECT x.c FROM (SELECT c FROM s.t WHERE c <> 'a') AS x", "c") is None  # a subquery
    assert _sources("SELECT c FROM s.t JOIN s.u ON s.t.id = s.u.id", "c") is None  # which table is unknown


def test_dimensions_over_a_column_are_indexed_however_the_column_is_written(tmp_path: Path) -> None:
    (tmp_path / "m.yml").write_text("""
cubes:
  - name: teams
    sql_table: league.teams
    dimensions:
      - {name: id, sql: id, type: number, primary_key: true}
      - {name: name, sql: "{CUBE}.name", type: string}
      - {name: park, sql: park, type: string}
      - {name: label, sql: "{CUBE}.city || ' ' || {CUBE}.name", type: string}
""")
    cube = load_model(tmp_path).cubes["teams"]
    assert [(d.name, column) for d, column in _indexed_dimensions(cube)] == [("name", "name"), ("park", "park")]


def test_a_plain_column_is_read_through_cube_references() -> None:
    from cube_models.physical import plain_column

    for sql in ("name", "{CUBE}.name", "{teams}.name", "teams.name", ' "name" '):
        assert plain_column("teams", sql) == "name", sql
    for sql in ("{CUBE}.first || ' ' || {CUBE}.last", "upper(name)", "{players}.name", None):
        assert plain_column("teams", sql) is None, sql


def test_a_short_upper_case_code_is_a_value_only_where_it_is_written_so() -> None:
    values = ValueIndex()
    values.add("people.birth_state", "IN")
    values.add("teams.league", "AL")
    assert values.filters("players born in 1990", set()) == []
    found = values.filters("AL players from IN", set())
    pairs = sorted((f["member"], f["values"][0]) for f in found)
    assert pairs == [("people.birth_state", "IN"), ("teams.league", "AL")]
