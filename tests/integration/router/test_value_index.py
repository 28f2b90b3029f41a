"""The dimension-value index read from the real warehouse: scanned on small tables, from statistics on big ones."""

from __future__ import annotations

import pytest

from cube_models.model import load_model
from cubesage_core.db import connection
from cubesage_core.settings import REPO_ROOT
from router.aggregate import values
from router.aggregate.values import ValueIndex

pytestmark = pytest.mark.integration
MODEL = load_model(REPO_ROOT / "demo" / "model")


def members(index: ValueIndex) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for pairs in index.surfaces.values():
        for member, value in pairs:
            out.setdefault(member, set()).add(value)
    return out


def test_low_cardinality_dimensions_are_indexed_and_names_are_not(pg_url: str) -> None:
    with connection(pg_url) as conn:
        found = members(ValueIndex.load(conn, MODEL, "warehouse"))
        brands = {r[0] for r in conn.execute("SELECT DISTINCT brand FROM warehouse.dim_product")}
    assert found["products.brand"] == brands and found["orders.status"] == {
        "completed",
        "refunded",
        "pending",
        "cancelled",
    }
    assert "customers.customer_name" not in found and "products.product_name" not in found  # too many values


def test_big_tables_are_read_from_statistics_not_scanned(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(values, "SCAN_ROWS", 0)  # every table counts as big
    with connection(pg_url) as conn:
        conn.execute("ANALYZE warehouse.fact_order")
        found = members(ValueIndex.load(conn, MODEL, "warehouse"))
    assert found["orders.channel"] == {"app", "web", "store"}


def test_a_select_cubes_values_come_from_the_tables_it_reads(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    scans: list[str] = []
    scan = values._bounded_scan

    def recorded(conn, query):  # type: ignore[no-untyped-def]
        scans.append(query.as_string(conn))
        return scan(conn, query)

    monkeypatch.setattr(values, "_bounded_scan", recorded)
    with connection(pg_url) as conn:
        found = members(ValueIndex.load(conn, MODEL, "warehouse"))
    assert found["revenue.channel"] == found["orders.channel"] and found["revenue.kind"] == {"sale", "refund"}
    assert not [q for q in scans if "cube_rows" in q]  # nothing read through the cube's join of order lines
