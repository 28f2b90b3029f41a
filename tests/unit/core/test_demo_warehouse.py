"""The demo generator is deterministic and honours the warehouse contract's definitions."""

from __future__ import annotations

from collections import Counter

import numpy as np
import yaml

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


def test_names_are_unique_at_every_scale_up_to_the_limit() -> None:
    """Past the single-surname space the generator takes double surnames: 200,000 customers (scale 10) and
    400,000 (scale 20, the limit) get distinct names, the reserved ones among them."""
    vocab = yaml.safe_load((demo_warehouse.DEMO_DIR / "vocab.yaml").read_text())
    for n in (200_000, 400_000):
        names = demo_warehouse._unique_names(np.random.default_rng(demo_warehouse.SEED), vocab, n)
        assert len(names) == n == len(set(names))
        assert set(vocab["reserved_customers"]) <= set(names)
        assert any(len(name) == 4 and " " not in name for name in names)
