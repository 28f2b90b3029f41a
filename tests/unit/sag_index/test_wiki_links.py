"""Wiki pages are linked to the tables they describe: front matter, then title, then text."""

from __future__ import annotations

import re
from pathlib import Path

from sag_index.wiki import load_wiki, page_tables, split_front_matter

NAMES = {
    "sales.orders": "sales.orders",
    "orders": "sales.orders",
    "order_lines": "sales.order_lines",
    "lines": "sales.order_lines",
    "customers": "sales.customers",
}


def test_front_matter_wins() -> None:
    front, body = split_front_matter("---\ntables: [customers, order_lines]\n---\n# Orders\nAbout orders.")
    assert body.startswith("# Orders")
    assert page_tables(front, "Orders", body, NAMES) == ["sales.customers", "sales.order_lines"]


def test_title_before_text() -> None:
    assert page_tables({}, "order_lines How lines are priced", "see also orders and customers", NAMES) == [
        "sales.order_lines"
    ]


def test_text_when_the_title_names_nothing() -> None:
    assert page_tables({}, "Glossary", "Every order has items; orders belong to customers.", NAMES) == [
        "sales.orders",
        "sales.customers",
    ]
    assert page_tables({}, "Holidays", "Nothing about tables.", NAMES) == []


def test_load_wiki_strips_front_matter_and_links(tmp_path: Path) -> None:
    (tmp_path / "returns.md").write_text("---\ntables: orders\n---\n# Returns\nHow returns are booked.\n")
    (tmp_path / "customers.zh.md").write_text("# 客户\n客户表的说明。\n")
    chunks = load_wiki(tmp_path, NAMES)
    by_source = {c.source: c for c in chunks}
    assert by_source["returns.md"].meta["tables"] == ["sales.orders"]
    assert "tables:" not in by_source["returns.md"].text
    assert by_source["customers.zh.md"].meta["tables"] == ["sales.customers"]


NOUNS = [
    ("sales.orders", re.compile(r"\border\b|\borders\b", re.I)),
    ("sales.customers", re.compile(r"\bcustomer\b|\bbuyer\b|客户", re.I)),
]


def test_nouns_link_prose_pages_only_when_no_name_matches() -> None:
    assert page_tables({}, "Refund policy", "A buyer may return an order within 14 days.", NAMES, NOUNS) == [
        "sales.orders",
        "sales.customers",
    ]
    assert page_tables({}, "退款规则", "每位客户可以退货。", NAMES, NOUNS) == ["sales.customers"]
    # a page that names a table exactly keeps that link alone
    assert page_tables({}, "Refunds", "orders are refunded to the buyer", NAMES, NOUNS) == ["sales.orders"]
    assert page_tables({}, "Holidays", "Nothing about tables.", NAMES, NOUNS) == []
