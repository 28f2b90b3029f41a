"""No silent cuts: a mixed answer whose detail query stops at its limit counts its rows per entity in SQL,
and every limit reached is stated as shown N of M (real PostgreSQL, the demo warehouse)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import date
from typing import Any

import pytest
from pydantic import SecretStr

from cubesage_core import db
from cubesage_core.settings import Settings

pytestmark = pytest.mark.integration
TODAY = date(2025, 6, 30)
CAP = 40  # far below the refunds of the top products


@pytest.fixture(scope="module")
def service(demo_ready: Any, pg_url: str) -> Iterator[Any]:
    from answer.service import Cubesage

    with Cubesage(Settings(database_url=SecretStr(pg_url)), url=pg_url) as svc:
        env = replace(svc.detail_env, mixed_limit=CAP, policy=replace(svc.detail_env.policy, max_limit=CAP))
        svc.detail_env = svc.pipeline.detail_env = env
        yield svc


def _refunds_per_product(url: str, products: list[str]) -> dict[str, int]:
    """Distinct refund rows per product, straight from the warehouse."""
    with db.connection(url) as conn:
        rows = conn.execute(
            """SELECT product_name, count(*) FROM (SELECT DISTINCT rf.refund_id, p.product_name
                 FROM warehouse.fact_refund rf JOIN warehouse.fact_order_item i ON i.order_id = rf.order_id
                 JOIN warehouse.dim_product p ON p.product_id = i.product_id WHERE p.product_name = ANY(%s)) d
               GROUP BY 1""",
            (products,),
        ).fetchall()
    return {name: int(n) for name, n in rows}


def test_capped_mixed_detail_counts_every_row_per_entity_and_says_so(service: Any, pg_url: str) -> None:
    answer = service.ask("top 5 products by GMV and their refund reasons", today=TODAY, mode="fast").to_dict()
    prov, table = answer["provenance"], answer["table"]
    assert prov["join"] == {"aggregate": "products.product_name", "detail": "product_name"}
    name_at, count_at = table["columns"].index("products.product_name"), table["columns"].index("detail_rows")
    truth = _refunds_per_product(pg_url, [row[name_at] for row in table["rows"]])
    assert sum(truth.values()) > CAP  # the detail query did stop at its limit
    assert [row[count_at] for row in table["rows"]] == [truth.get(row[name_at], 0) for row in table["rows"]]
    detail_cut = next(c for c in prov["truncation"] if c["part"] == "detail")
    assert detail_cut["shown"] == CAP and detail_cut["total"] >= sum(truth.values()) > CAP
    assert f"{CAP} of {detail_cut['total']:,} are shown" in answer["text"]
    reasons = table["columns"].index("reason_counts")
    top = max(table["rows"], key=lambda row: row[count_at])
    assert sum(int(part.rsplit("(", 1)[1].rstrip(")")) for part in top[reasons].split(", ")) == top[count_at]


def test_a_detail_listing_at_its_cap_is_counted_and_stated(service: Any, pg_url: str) -> None:
    answer = service.ask("list the refunds above 100", today=TODAY, mode="fast").to_dict()
    with db.connection(pg_url) as conn:
        there = conn.execute("SELECT count(*) FROM warehouse.fact_refund WHERE amount > 100").fetchone()[0]
    assert there > CAP
    cut = next(c for c in answer["provenance"]["truncation"] if c["part"] == "detail")
    assert cut["shown"] == len(answer["table"]["rows"]) <= CAP and cut["total"] == there
    assert answer["table"]["truncated"] is True and answer["table"]["total_rows"] == there
