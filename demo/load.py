"""Deterministic generator and loader of the demo warehouse "shop" (schema ``warehouse``).

The contract (table and column names, sizes at scale 1, metric definitions) is
``shared/WAREHOUSE.md``; the vocabulary is data in ``demo/vocab.yaml``. The same
seed and scale always produce the same rows. Rows are bulk-loaded with COPY.
"""

from __future__ import annotations

import bisect
import io
import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from cubesage_core.db import connection, one

SEED = 20240301
SCHEMA = "warehouse"
DEMO_DIR = Path(__file__).resolve().parent
TABLE_ORDER = (
    "dim_region",
    "dim_customer",
    "dim_product",
    "fact_order",
    "fact_order_item",
    "fact_payment",
    "fact_refund",
)


@dataclass
class Table:
    name: str
    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]]


def _pick(rng: np.random.Generator, values: Sequence[Any], weights: Sequence[float], n: int) -> np.ndarray:
    p = np.asarray(weights, dtype=float)
    return rng.choice(np.asarray(values, dtype=object), size=n, p=p / p.sum())


Form = tuple[Sequence[str], ...]  # word lists: a name is one word of each, joined


def _decode(index: int, form: Form, sep: str) -> str:
    """The ``index``-th name of ``form`` (the first list varies slowest, as nested loops would)."""
    parts: list[str] = []
    for words in reversed(form):
        index, at = divmod(index, len(words))
        parts.append(words[at])
    return sep.join(reversed(parts))


def _from_tiers(
    rng: np.random.Generator, tiers: Sequence[Sequence[Form]], count: int, skip: set[str], sep: str
) -> list[str]:
    """``count`` distinct names: a tier is the concatenation of its forms' products, shuffled as a whole; tiers
    are used in order, each only when the ones before it are used up. Names of different forms differ in their
    number of parts, so no name repeats; only the ``skip`` names and repeated surnames are left out."""
    picked: list[str] = []
    for forms in tiers:
        if len(picked) >= count:
            break
        sizes = [int(np.prod([len(words) for words in form])) for form in forms]
        offsets = [0, *itertools.accumulate(sizes)]
        for index in rng.permutation(offsets[-1]).tolist():
            at = bisect.bisect_right(offsets, index) - 1
            name = _decode(index - offsets[at], forms[at], sep)
            parts = name.split(sep) if sep else list(name)
            if name in skip or (len(forms[at]) == 4 and parts[0] == parts[1]):
                continue
            picked.append(name)
            if len(picked) == count:
                break
    if len(picked) < count:
        raise ValueError(f"name vocabulary too small for {count} names")
    return picked


def _unique_names(rng: np.random.Generator, vocab: dict[str, Any], n: int) -> list[str]:
    """``n`` distinct customer names: the reserved ones, English ones (up to a third, from first x last names),
    the rest Chinese: surname + given name(s), then, past those, double surnames (张王丽华) for big scales."""
    reserved = list(vocab["reserved_customers"])
    sur, given = vocab["cn_surnames"], vocab["cn_given"]
    en_form: Form = (vocab["en_first"], vocab["en_last"])
    need = max(n - len(reserved), 0)
    n_en = min(need // 3, len(en_form[0]) * len(en_form[1]) - len(reserved))
    english = _from_tiers(rng, [[en_form]], n_en, set(reserved), " ")
    chinese = _from_tiers(
        rng, [[(sur, given), (sur, given, given)], [(sur, sur, given, given)]], need - n_en, set(reserved), ""
    )
    out = reserved + english + chinese
    return [out[i] for i in rng.permutation(len(out))][:n]


def generate(scale: float = 1.0, vocab_path: Path | None = None, seed: int = SEED) -> list[Table]:
    """All seven tables, deterministic for (scale, vocab, seed): one random stream, drawn table by table."""
    if scale <= 0 or scale > 20:
        raise ValueError(f"scale must be in (0, 20], got {scale}")
    vocab = yaml.safe_load((vocab_path or DEMO_DIR / "vocab.yaml").read_text())
    rng = np.random.default_rng(seed)
    start = datetime.fromisoformat(vocab["start"])
    end = datetime.fromisoformat(vocab["end"]) + timedelta(days=1) - timedelta(seconds=1)
    region_rows = [(r["region_id"], r["region_code"], r["name_en"], r["name_zh"]) for r in vocab["regions"]]
    customers = _customers(rng, vocab, scale, start, end)
    products, popularity = _products(rng, vocab, scale, start)
    orders = _orders(rng, vocab, scale, start, end, customers)
    items, order_total = _items(rng, vocab, orders, products, popularity)
    payments = _payments(rng, vocab, orders, order_total)
    refunds = _refunds(rng, vocab, orders, order_total, end)
    return [
        Table("dim_region", ("region_id", "region_code", "name_en", "name_zh"), region_rows),
        Table(
            "dim_customer", ("customer_id", "customer_name", "segment", "region_id", "city", "signup_date"), customers
        ),
        Table(
            "dim_product", ("product_id", "product_name", "category", "brand", "unit_price", "launched_on"), products
        ),
        Table("fact_order", ("order_id", "customer_id", "region_id", "channel", "status", "order_ts"), orders),
        Table(
            "fact_order_item",
            ("order_item_id", "order_id", "product_id", "quantity", "unit_price", "discount", "amount"),
            items,
        ),
        Table("fact_payment", ("payment_id", "order_id", "method", "amount", "paid_ts"), payments),
        Table("fact_refund", ("refund_id", "order_id", "amount", "reason", "refund_ts"), refunds),
    ]


def _customers(
    rng: np.random.Generator, vocab: dict[str, Any], scale: float, start: datetime, end: datetime
) -> list[tuple[Any, ...]]:
    regions = vocab["regions"]
    n_cust = max(int(20_000 * scale), 50)
    names = _unique_names(rng, vocab, n_cust)
    cust_region = _pick(rng, [r["region_id"] for r in regions], vocab["region_weights"], n_cust)
    cities_by_region = {r["region_id"]: r["cities"] for r in regions}
    seg = _pick(rng, vocab["segments"], vocab["segment_weights"], n_cust)
    signup_days = rng.integers(-730, (end - start).days + 1, size=n_cust)
    city_pick = rng.random(n_cust)
    customers = []
    for i in range(n_cust):
        cities = cities_by_region[int(cust_region[i])]
        city = cities[int(city_pick[i] * len(cities))]
        customers.append(
            (i + 1, names[i], seg[i], int(cust_region[i]), city, (start + timedelta(days=int(signup_days[i]))).date())
        )
    return customers


def _products(
    rng: np.random.Generator, vocab: dict[str, Any], scale: float, start: datetime
) -> tuple[list[tuple[Any, ...]], np.ndarray]:
    """The products (the reserved ones first) and their order popularity (Zipf, shuffled)."""
    n_prod = max(int(500 * scale), 40)
    products = []
    seen: set[str] = set()
    for j, rp in enumerate(vocab["reserved_products"]):
        launched = (start - timedelta(days=int(rng.integers(0, 400)))).date()
        products.append((j + 1, rp["product_name"], rp["category"], rp["brand"], float(rp["unit_price"]), launched))
        seen.add(rp["product_name"])
    cats = list(vocab["categories"])
    letters = vocab["model_letters"]
    while len(products) < n_prod:
        cat = str(_pick(rng, cats, vocab["category_weights"], 1)[0])
        spec = vocab["categories"][cat]
        brand = spec["brands"][int(rng.integers(len(spec["brands"])))]
        noun = spec["nouns"][int(rng.integers(len(spec["nouns"])))]
        model = f"{letters[int(rng.integers(len(letters)))]}{int(rng.integers(1, 10))}"
        name = f"{brand} {model} {noun}"
        if name in seen:
            continue
        seen.add(name)
        lo, hi = spec["price"]
        price = round(float(np.exp(rng.uniform(np.log(lo), np.log(hi)))), 0) - 0.01
        launched = (start + timedelta(days=int(rng.integers(-600, 700)))).date()
        products.append((len(products) + 1, name, cat, brand, price, launched))
    popularity = 1.0 / np.arange(1, n_prod + 1) ** 0.8
    popularity = popularity[rng.permutation(n_prod)]
    popularity /= popularity.sum()
    return products, popularity


def _orders(
    rng: np.random.Generator,
    vocab: dict[str, Any],
    scale: float,
    start: datetime,
    end: datetime,
    customers: list[tuple[Any, ...]],
) -> list[tuple[Any, ...]]:
    """Orders: growth over time plus a year-end peak; the last two weeks' are often still pending."""
    regions = vocab["regions"]
    span_s = int((end - start).total_seconds())
    n_ord = max(int(100_000 * scale), 200)
    u = rng.random(n_ord * 2)
    ts_s = (np.sqrt(u) * span_s).astype(np.int64)  # linear growth of order density
    doy = np.array([(start + timedelta(seconds=int(s))).timetuple().tm_yday for s in ts_s[: n_ord * 2]])
    keep = rng.random(n_ord * 2) < np.where((doy > 305) & (doy < 330), 1.0, 0.8)
    ts_s = np.sort(ts_s[keep][:n_ord])
    if len(ts_s) < n_ord:
        ts_s = np.sort(np.concatenate([ts_s, rng.integers(0, span_s, n_ord - len(ts_s))]))
    order_ts = [start + timedelta(seconds=int(s)) for s in ts_s]
    order_cust = rng.integers(1, len(customers) + 1, size=n_ord)
    cust_reg = np.array([c[3] for c in customers])
    other_region = _pick(rng, [r["region_id"] for r in regions], vocab["region_weights"], n_ord)
    order_region = np.where(rng.random(n_ord) < 0.95, cust_reg[order_cust - 1], other_region)
    channel = _pick(rng, vocab["channels"], vocab["channel_weights"], n_ord)
    status = _pick(rng, vocab["statuses"], vocab["status_weights"], n_ord)
    recent = ts_s > span_s - 14 * 86400
    status = np.where(recent & (rng.random(n_ord) < 0.35), "pending", status)
    return [(i + 1, int(order_cust[i]), int(order_region[i]), channel[i], status[i], order_ts[i]) for i in range(n_ord)]


def _items(
    rng: np.random.Generator,
    vocab: dict[str, Any],
    orders: list[tuple[Any, ...]],
    products: list[tuple[Any, ...]],
    popularity: np.ndarray,
) -> tuple[list[tuple[Any, ...]], np.ndarray]:
    """Order lines (1-4 per order), and each order's total by order id."""
    n_ord, n_prod = len(orders), len(products)
    prod_price = np.array([p[4] for p in products])
    n_items = rng.choice([1, 2, 3, 4], size=n_ord, p=[0.25, 0.3, 0.25, 0.2])
    item_order = np.repeat(np.arange(1, n_ord + 1), n_items)
    n_lines = len(item_order)
    item_prod = rng.choice(n_prod, size=n_lines, p=popularity) + 1
    qty = rng.choice([1, 2, 3], size=n_lines, p=[0.7, 0.2, 0.1])
    disc = _pick(rng, vocab["discounts"], vocab["discount_weights"], n_lines).astype(float)
    price = prod_price[item_prod - 1]
    amount = np.round(qty * price * (1 - disc), 2)
    items = [
        (k + 1, int(item_order[k]), int(item_prod[k]), int(qty[k]), float(price[k]), float(disc[k]), float(amount[k]))
        for k in range(n_lines)
    ]
    return items, np.bincount(item_order, weights=amount, minlength=n_ord + 1)


def _payments(
    rng: np.random.Generator, vocab: dict[str, Any], orders: list[tuple[Any, ...]], order_total: np.ndarray
) -> list[tuple[Any, ...]]:
    """Payments of completed and refunded orders, and of half of the pending ones."""
    n_ord = len(orders)
    status = np.array([o[4] for o in orders], dtype=object)
    paid = (status == "completed") | (status == "refunded") | ((status == "pending") & (rng.random(n_ord) < 0.5))
    method = _pick(rng, vocab["payment_methods"], vocab["payment_weights"], n_ord)
    delay = rng.integers(10, 3600, size=n_ord)
    payments: list[tuple[Any, ...]] = []
    for i in np.flatnonzero(paid):
        payments.append(
            (
                len(payments) + 1,
                int(i + 1),
                method[i],
                round(float(order_total[i + 1]), 2),
                orders[i][5] + timedelta(seconds=int(delay[i])),
            )
        )
    return payments


def _refunds(
    rng: np.random.Generator,
    vocab: dict[str, Any],
    orders: list[tuple[Any, ...]],
    order_total: np.ndarray,
    end: datetime,
) -> list[tuple[Any, ...]]:
    """One refund per refunded order, full or partial."""
    n_ord = len(orders)
    status = np.array([o[4] for o in orders], dtype=object)
    reason = _pick(rng, vocab["refund_reasons"], vocab["refund_weights"], n_ord)
    refund_days = rng.integers(1, 31, size=n_ord)
    partial = rng.random(n_ord) < 0.4
    refunds: list[tuple[Any, ...]] = []
    for i in np.flatnonzero(status == "refunded"):
        total = float(order_total[i + 1])
        amt = round(total * 0.5, 2) if partial[i] else round(total, 2)
        when = min(orders[i][5] + timedelta(days=int(refund_days[i]), hours=3), end)
        refunds.append((len(refunds) + 1, int(i + 1), amt, reason[i], when))
    return refunds


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".") if value != int(value) else str(int(value))
    if isinstance(value, datetime | date):
        return value.isoformat(sep=" ") if isinstance(value, datetime) else value.isoformat()
    return str(value)


def _copy_text(rows: Iterable[tuple[Any, ...]]) -> str:
    buf = io.StringIO()
    for row in rows:
        buf.write("\t".join(_fmt(v) for v in row))
        buf.write("\n")
    return buf.getvalue()


def load(
    url: str,
    schema: str = SCHEMA,
    scale: float = 1.0,
    demo_dir: Path | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> dict[str, int]:
    """The pack loader: (re)create the warehouse tables and load generated rows; returns row counts per table.
    The demo's SQL names its schema, so ``schema`` must be ``warehouse``."""
    if schema != SCHEMA:
        raise ValueError(f"the demo warehouse lives in schema {SCHEMA!r}, not {schema!r}")
    demo_dir = demo_dir or DEMO_DIR
    tables = generate(scale, demo_dir / "vocab.yaml")
    counts: dict[str, int] = {}
    with connection(url) as conn, conn.transaction():
        conn.execute((demo_dir / "warehouse.sql").read_text())
        for table in tables:
            cols = ", ".join(table.columns)
            with conn.cursor().copy(f"COPY warehouse.{table.name} ({cols}) FROM STDIN") as copy:
                copy.write(_copy_text(table.rows))
            counts[table.name] = len(table.rows)
            if progress is not None:
                progress(table.name, len(table.rows))
        conn.execute((demo_dir / "warehouse_indexes.sql").read_text())
    return counts


def loaded(url: str) -> bool:
    """Whether the demo's orders are in the database (``cubesage demo run`` keeps them)."""
    with connection(url) as conn:
        exists = one(conn.execute(f"SELECT to_regclass('{SCHEMA}.fact_order') IS NOT NULL").fetchone())[0]
        return bool(exists) and bool(
            one(conn.execute(f"SELECT EXISTS (SELECT 1 FROM {SCHEMA}.fact_order)").fetchone())[0]
        )
