"""Rows an aggregate question names become filters on the cube of their table."""

from __future__ import annotations

from pathlib import Path

from cube_models.model import load_model
from cubesage_core.settings import REPO_ROOT
from router.aggregate.entities import entity_filters
from router.detail.entities import EntityMatch

MODEL = load_model(REPO_ROOT / "demo" / "model")


def test_named_rows_filter_their_cube_by_name() -> None:
    li = EntityMatch("dim_customer", "customer_id", 7, "Li Wei", "customer", "directory")
    wang = EntityMatch("dim_customer", "customer_id", 9, "王芳", "customer", "sag")
    aurora = EntityMatch("dim_product", "product_id", 3, "Aurora X1 headphones", "product", "directory")
    assert entity_filters([li, aurora, wang], MODEL, set()) == [
        {"member": "customers.customer_name", "operator": "equals", "values": ["Li Wei", "王芳"]},
        {"member": "products.product_name", "operator": "equals", "values": ["Aurora X1 headphones"]},
    ]


def test_cubes_already_filtered_by_a_value_and_unknown_tables_are_left_alone() -> None:
    east = EntityMatch("dim_region", "region_id", 1, "East China", "region", "directory")
    other = EntityMatch("dim_supplier", "supplier_id", 1, "Acme", "supplier", "directory")
    assert entity_filters([east, other], MODEL, {"regions"}) == []
    assert entity_filters([east], MODEL, set()) == [
        {"member": "regions.name_en", "operator": "equals", "values": ["East China"]}
    ]


def test_a_cube_without_a_name_dimension_is_filtered_by_its_key(tmp_path: Path) -> None:
    (tmp_path / "tickets.yml").write_text("""
cubes:
  - name: tickets
    sql_table: shop.ticket
    dimensions:
      - {name: ticket_no, sql: ticket_no, type: number, primary_key: true}
      - {name: subject, sql: subject, type: string}
    measures:
      - {name: count, type: count}
""")
    ticket = EntityMatch("ticket", "ticket_no", 42, "#42", "ticket", "sag")
    assert entity_filters([ticket], load_model(tmp_path), set()) == [
        {"member": "tickets.ticket_no", "operator": "equals", "values": ["42"]}
    ]


def test_a_cube_defined_by_a_single_table_select_maps_its_base_table(tmp_path: Path) -> None:
    (tmp_path / "vendors.yml").write_text("""
cubes:
  - name: vendors
    sql: SELECT v.v_id, v.v_name, c.c_name AS country FROM shop.vendor v JOIN shop.country c ON c.c_id = v.c_id
    dimensions:
      - {name: vendor_key, sql: v_id, type: number, primary_key: true}
      - {name: name, sql: v_name, type: string}
      - {name: country, sql: country, type: string}
""")
    model = load_model(tmp_path)
    acme = EntityMatch("vendor", "v_id", 5, "Acme", "vendor", "directory")
    assert entity_filters([acme], model, set()) == [
        {"member": "vendors.name", "operator": "equals", "values": ["Acme"]}
    ]
