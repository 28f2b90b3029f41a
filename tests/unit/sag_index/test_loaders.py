"""Loaders: heading-strict markdown, plain text, HTML and JSON/JSONL records; stable ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sag_index.errors import LoaderError
from sag_index.loaders import load_dir, load_html, load_json_records, load_markdown, load_path, load_text

MD = """Intro line before any heading.

# fact_refund

Refunds of orders.

## Columns
- reason: why the money went back

```python
# not a heading inside a fence
```

## Joins
fact_refund.order_id -> fact_order.order_id
"""


def test_markdown_splits_on_atx_headings_only() -> None:
    chunks = load_markdown(MD, "fact_refund.md")
    headings = [c.heading for c in chunks]
    assert headings == ["", "fact_refund", "fact_refund / Columns", "fact_refund / Joins"]
    columns = chunks[2]
    assert "# not a heading inside a fence" in columns.text
    assert columns.text.startswith("Columns")
    assert all(c.source_type == "markdown" for c in chunks)


def test_chunk_ids_are_content_hashes() -> None:
    first = load_markdown(MD, "a.md")
    again = load_markdown(MD, "a.md")
    assert [c.chunk_id for c in first] == [c.chunk_id for c in again]
    changed = load_markdown(MD.replace("Refunds of orders.", "Refunded orders."), "a.md")
    assert first[1].chunk_id != changed[1].chunk_id
    assert first[2].chunk_id == changed[2].chunk_id  # untouched sections keep their ids
    assert len({c.chunk_id for c in first}) == len(first)


def test_markdown_without_headings_falls_back_to_text() -> None:
    chunks = load_markdown("just a paragraph\n\nand another", "notes.md")
    assert len(chunks) == 1 and chunks[0].source_type == "text"


def test_plain_text_packs_paragraphs_and_splits_long_text() -> None:
    text = "\n\n".join(f"Paragraph {i} " + "word " * 200 for i in range(10))
    chunks = load_text(text, "long.txt")
    assert len(chunks) > 1
    assert all(len(c.text) <= 4000 for c in chunks)
    assert "Paragraph 9" in chunks[-1].text


def test_html_keeps_visible_text_and_splits_on_headings() -> None:
    html = """<html><head><title>Channels</title><style>p {color: red}</style></head><body>
    <h1>Sales channels</h1><p>Orders come from <b>web</b>, app and store.</p>
    <script>var x = "hidden";</script><h2>Shares</h2><p>App &amp; web: 42% each.</p></body></html>"""
    chunks = load_html(html, "channels.html")
    assert [c.heading for c in chunks] == ["Sales channels", "Shares"]
    assert "web" in chunks[0].text and "hidden" not in chunks[0].text and "color" not in chunks[0].text
    assert "App & web" in chunks[1].text


def test_html_without_headings_uses_title() -> None:
    chunks = load_html("<html><head><title>T</title></head><body><p>one</p><p>two</p></body></html>", "x.html")
    assert len(chunks) == 1 and chunks[0].heading == "T" and "one" in chunks[0].text


def test_json_and_jsonl_one_chunk_per_record(tmp_path: Path) -> None:
    records = [{"id": 1, "name": "Aurora X1 headphones"}, {"id": 2, "name": "Lotus K3 kettle"}]
    (tmp_path / "p.json").write_text(json.dumps(records))
    (tmp_path / "p.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    from_json = load_path(tmp_path / "p.json")
    from_jsonl = load_path(tmp_path / "p.jsonl")
    assert len(from_json) == len(from_jsonl) == 2
    assert "name: Aurora X1 headphones" in from_json[0].text
    assert from_json[1].meta["record"] == records[1]
    titled = load_json_records(records, "p", text_field="name", title_field="id")
    assert titled[0].text == "Aurora X1 headphones" and titled[0].heading == "1"


def test_bad_input_raises_typed_errors(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "bad.jsonl").write_text('{"a": 1}\nnope\n')
    (tmp_path / "x.pdf").write_bytes(b"%PDF")
    with pytest.raises(LoaderError, match="invalid JSON"):
        load_path(tmp_path / "bad.json")
    with pytest.raises(LoaderError, match=r"bad.jsonl:2"):
        load_path(tmp_path / "bad.jsonl")
    with pytest.raises(LoaderError, match="unsupported format"):
        load_path(tmp_path / "x.pdf")
    with pytest.raises(LoaderError, match="no such file"):
        load_path(tmp_path / "missing.md")
    with pytest.raises(LoaderError, match="expected an object"):
        load_json_records([1, 2], "nums")


def test_demo_wiki_loads_every_format() -> None:
    from cubesage_core.settings import REPO_ROOT

    chunks = load_dir(REPO_ROOT / "demo" / "wiki")
    types = {c.source_type for c in chunks}
    assert {"markdown", "text", "html"} <= types
    sources = {Path(c.source).name for c in chunks}
    for table in (
        "dim_region",
        "dim_customer",
        "dim_product",
        "fact_order",
        "fact_order_item",
        "fact_payment",
        "fact_refund",
    ):
        assert f"{table}.md" in sources
    assert {"fact_order.zh.md", "dim_region.zh.md"} <= sources
