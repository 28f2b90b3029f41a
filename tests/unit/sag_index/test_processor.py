"""Fast processor, filter and parser: exactly one event per chunk, normalised deduplicated entities."""

from __future__ import annotations

from sag_index._stages import filter_extraction, parse_extraction
from sag_index.loaders import load_markdown, make_chunk
from sag_index.processor import FastProcessor, condense


def _names(chunk, glossary=()) -> set[str]:
    return {e.name for e in FastProcessor(glossary).extract(chunk).entities}


def test_fast_processor_entity_sources() -> None:
    text = (
        'Demon Dice, originally published as "Chaos Progenitus", is a dice game created by Lester Smith '
        "in 1993 for Fast Forward Games. The table fact_refund stores the refund reason; "
        "GMV is computed on 2024-03-01."
    )
    chunk = make_chunk("t", text, heading="Demon Dice")
    names = _names(chunk, glossary=["GMV", "refund rate"])
    assert {
        "Demon Dice",
        "Chaos Progenitus",
        "Lester Smith",
        "Fast Forward Games",
        "1993",
        "fact_refund",
        "2024-03-01",
    } <= names
    assert any(n.lower() == "gmv" for n in names)
    assert "The" not in names


def test_fast_processor_title_subject_and_content() -> None:
    chunk = load_markdown(
        "# fact_order\n\n## Columns\nstatus: completed, refunded. " + "More text. " * 100, "fact_order.md"
    )[-1]
    extraction = FastProcessor().extract(chunk)
    assert extraction.title == "fact_order: Columns"
    assert len(extraction.content) <= 300
    subject = [e for e in extraction.entities if e.role == "subject"]
    assert [e.name for e in subject] == ["fact_order"]  # the page topic links all its sections
    no_heading = make_chunk("t", "The kettle boils water fast. It is made by Lotus.")
    assert FastProcessor().extract(no_heading).title == "The kettle boils water fast."


def test_chinese_nouns_are_entities() -> None:
    chunk = make_chunk("zh", "订单事实表记录客户、下单地区、销售渠道和订单状态。华东地区的退款率最高。")
    names = _names(chunk)
    assert {"订单", "客户", "华东"} & names
    assert "的" not in names


def test_declared_entities_are_kept() -> None:
    chunk = make_chunk(
        "warehouse.dim_customer",
        "customer 王芳 (customer_id 7)",
        kind="row",
        meta={
            "title": "customer 王芳",
            "entities": [
                {"name": "王芳", "type": "customer", "role": "subject"},
                {"name": "customer_id 7", "type": "key", "embed": False},
            ],
        },
    )
    extraction = FastProcessor().extract(chunk)
    assert extraction.title == "customer 王芳"
    assert [(e.name, e.role, e.embed) for e in extraction.entities] == [
        ("王芳", "subject", True),
        ("customer_id 7", "mention", False),
    ]


def test_filter_and_parser_make_one_event_with_unique_entities() -> None:
    chunk = make_chunk("t", "Li Wei met LI WEI and Li  Wei in Shanghai. The the.", heading="Li Wei")
    extraction = FastProcessor().extract(chunk)
    extraction.entities += extraction.entities  # duplicates from a sloppy processor
    extraction.title = ""
    record = parse_extraction(filter_extraction(extraction, chunk), chunk)
    assert record.event_id == f"ev_{chunk.chunk_id}"
    assert record.title == "Li Wei"  # repaired from the heading
    ids = [e.entity_id for e in record.entities]
    assert len(ids) == len(set(ids))
    assert sum(1 for e in record.entities if e.normalized == "li wei") == 1
    roles = {link.entity_id: link.role for link in record.links}
    li_wei = next(e.entity_id for e in record.entities if e.normalized == "li wei")
    assert roles[li_wei] == "subject"


def test_condense_strips_markdown() -> None:
    assert condense("**Bold** [link](http://x) `code` text.") == "Bold link code text."
