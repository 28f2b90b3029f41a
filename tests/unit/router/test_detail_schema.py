"""DetailCatalog derivation from Cube models: tables, keys, columns, time/label columns, joins, words."""

from __future__ import annotations

from pathlib import Path

import pytest

from cube_models.model import load_model
from cubesage_core.settings import Settings
from router.detail.schema import VocabularyError, build_catalog, load_vocabulary
from router.detail.vocabulary import target_table, word_pattern

DEMO_MODEL = load_model(Settings().model_dir)


def test_demo_model_alone_gives_the_contract_tables_and_foreign_keys() -> None:
    catalog = build_catalog(DEMO_MODEL)  # no vocabulary file: derive only
    assert sorted(catalog.tables) == [
        "dim_customer",
        "dim_product",
        "dim_region",
        "fact_order",
        "fact_order_item",
        "fact_payment",
        "fact_refund",
    ]  # the revenue UNION is no table
    assert {(e.child, e.column, e.parent, e.parent_column) for e in catalog.graph.edges} == {
        ("fact_order", "customer_id", "dim_customer", "customer_id"),
        ("fact_order", "region_id", "dim_region", "region_id"),
        ("fact_order_item", "order_id", "fact_order", "order_id"),
        ("fact_order_item", "product_id", "dim_product", "product_id"),
        ("fact_payment", "order_id", "fact_order", "order_id"),
        ("fact_refund", "order_id", "fact_order", "order_id"),
        ("dim_customer", "region_id", "dim_region", "region_id"),
    }
    items = catalog.tables["fact_order_item"]  # a SQL cube over one base table (+ a joined order status)
    assert items.key == "order_item_id" and "order_status" not in items.columns and "status" not in items.columns
    assert items.time == ("fact_order", "order_ts")  # reached over the many-to-one join
    assert {t.table: t.label for t in catalog.entity_tables} == {
        "dim_customer": "customer_name",
        "dim_product": "product_name",
        "dim_region": "name_en",
    }
    assert catalog.tables["fact_order"].display == (
        ("fact_order", "order_id"),
        ("dim_customer", "customer_name"),
        ("dim_region", "name_en"),
        ("fact_order", "channel"),
        ("fact_order", "status"),
        ("fact_order", "order_ts"),
    )
    aliases = [t.alias for t in catalog.tables.values()]
    assert len(set(aliases)) == len(aliases)
    assert target_table("show the order items of X", (), catalog.derived_nouns) == "fact_order_item"
    assert target_table("customers with orders", (), catalog.derived_nouns) == "dim_customer"  # earliest noun


def test_vocabulary_overrides_and_ignores_unknown_tables(tmp_path: Path) -> None:
    (tmp_path / "v.yaml").write_text(
        "tables:\n  fact_order: {alias: o, display: [order_id, dim_region.name_en]}\n"
        "  no_such_table: {alias: x}\n"
        "values:\n  - {column: no_such.col, value: v, pattern: 'v'}\n"
        "  - {column: fact_order.channel, value: web, pattern: '官网'}\n"
    )
    catalog = build_catalog(DEMO_MODEL, vocabulary=load_vocabulary(tmp_path / "v.yaml"))
    assert catalog.alias("fact_order") == "o"
    assert catalog.tables["fact_order"].display == (("fact_order", "order_id"), ("dim_region", "name_en"))
    assert [(w.table, w.column, w.value) for w in catalog.values] == [("fact_order", "channel", "web")]


def test_missing_and_malformed_vocabulary_files(tmp_path: Path) -> None:
    assert load_vocabulary(tmp_path / "absent.yaml") == {}
    (tmp_path / "bad.yaml").write_text("- just\n- a list\n")
    with pytest.raises(VocabularyError, match="mapping"):
        load_vocabulary(tmp_path / "bad.yaml")
    for broken in (
        {"values": [{"column": "fact_order.status", "value": "x", "pattern": "(unclosed"}]},
        {"nouns": [{"pattern": "orders"}]},
        {"implied": [{"target": "fact_refund", "column": "status", "value": "refunded"}]},
    ):
        with pytest.raises(VocabularyError, match=r"malformed|must be written"):
            build_catalog(DEMO_MODEL, vocabulary=broken)


def test_meta_label_synonyms_glossary_and_safe_aliases(tmp_path: Path) -> None:
    (tmp_path / "m.yml").write_text("""
cubes:
  - name: order_notes
    sql_table: crm.notes
    meta: {detail_label: headline, entity_type: note, synonyms: [remarks]}
    dimensions:
      - {name: id, sql: id, type: number, primary_key: true}
      - {name: headline, sql: headline, type: string}
      - {name: author_name, sql: author_name, type: string}
      - {name: kind, sql: kind, type: string}
""")
    terms = [
        {
            "canonical_term": "memo",
            "synonyms": ["备忘"],
            "mapped_asset_id": "dimension:order_notes.kind",
            "filter_value": "memo",
        },
        {"canonical_term": "x", "synonyms": [], "mapped_asset_id": "dimension:unknown.kind", "filter_value": "x"},
    ]
    catalog = build_catalog(load_model(tmp_path), terms=terms)
    notes = catalog.tables["notes"]
    assert (notes.schema, notes.label, notes.entity_type) == ("crm", "headline", "note")
    assert notes.alias == "on2"  # the initials "on" are an SQL keyword
    assert target_table("all remarks", (), catalog.derived_nouns) == "notes"
    [word] = catalog.values
    assert (word.column, word.value) == ("kind", "memo") and word.pattern.search("我的备忘")
    assert not word.pattern.search("memory")


def test_meta_label_names_a_dimension_its_column_or_else_a_name_column(tmp_path: Path) -> None:
    def label(detail_label: str) -> str | None:
        (tmp_path / "m.yml").write_text(f"""
cubes:
  - name: people
    sql_table: club.people
    meta: {{detail_label: {detail_label}}}
    dimensions:
      - {{name: id, sql: id, type: number, primary_key: true}}
      - {{name: full_name, sql: "{{CUBE}}.name_first || ' ' || {{CUBE}}.name_last", type: string}}
      - {{name: name_first, sql: name_first, type: string}}
      - {{name: nickname, sql: "{{CUBE}}.nick", type: string}}
""")
        return build_catalog(load_model(tmp_path)).tables["people"].label

    assert label("nickname") == "nick"  # a dimension: its column
    assert label("nick") == "nick"  # a column of a dimension
    assert label("full_name") == "name_first"  # an expression is no column: the first name-like column


def test_word_pattern_bounds_latin_words_only() -> None:
    pattern = word_pattern(["late delivery", "延迟"], spaced=True)
    assert pattern.search("a late_delivery refund") and pattern.search("配送延迟了")
    assert not pattern.search("chocolate delivery")


def test_glossary_value_words_except_for_the_tables_a_vocabulary_switches_off() -> None:
    def term(member: str, value: str, word: str) -> dict:
        return {"canonical_term": word, "synonyms": [], "mapped_asset_id": f"dimension:{member}", "filter_value": value}

    terms = [term("orders.channel", "web", "website"), term("regions.region_code", "east", "华东")]
    vocabulary = {"glossary_values": False, "tables": {"fact_order": {"alias": "o"}}}
    catalog = build_catalog(DEMO_MODEL, vocabulary=vocabulary, terms=terms)
    assert [(w.table, w.column, w.value) for w in catalog.values] == [("dim_region", "region_code", "east")]
    everything = build_catalog(DEMO_MODEL, terms=terms)
    assert [w.value for w in everything.values] == ["web", "east"]
