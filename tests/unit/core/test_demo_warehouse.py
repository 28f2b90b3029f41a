"""The demo generator is deterministic and honours the warehouse contract's definitions."""

from __future__ import annotations

from collections import Counter

from demo import load as demo_warehouse


def _tables(scale: float) -> dict[str, demo_warehouse.Table]:
    return {t.name: t for t in demo_warehouse.generate(scale)}


def test_same_seed_same_rows_and_contract_columns() -> None:
    a, b = _tables(0.03), _tables(0.03)
    assert list(a) == list(demo_warehouse.TABLE_ORDER)
    for name in a:
        assert a[name].rows == b[name].rows
    assert a["fact_order"].columns == ("order_id", "customer_id", "region_id", "channel", "status", "order_ts")
    assert len(a["dim_region"].rows) == 8


def test_invariants_of_the_generated_data() -> None:
    t = _tables(0.05)
    names = [r[1] for r in t["dim_customer"].rows]
    assert len(names) == len(set(names)) and "王芳" in names and "Li Wei" in names
    assert "Aurora X1 headphones" in {r[1] for r in t["dim_product"].rows}
    status = {r[0]: r[4] for r in t["fact_order"].rows}
    assert {status[r[1]] for r in t["fact_refund"].rows} == {"refunded"}
    assert len(t["fact_refund"].rows) == Counter(status.values())["refunded"]
    for _, _, _, qty, price, disc, amount in t["fact_order_item"].rows[:500]:
        assert abs(amount - round(qty * price * (1 - disc), 2)) < 0.006
    ts = [r[5] for r in t["fact_order"].rows]
    assert min(ts).isoformat() >= "2023-01-01" and max(ts).isoformat() < "2025-07-01"
    assert {r[3] for r in t["fact_order"].rows} == {"web", "app", "store"}
