"""The TPC-H pack's files agree with its Cube model: glossary, few-shots, wiki front matter, titles."""

from __future__ import annotations

import datetime as dt

import pytest
import yaml

from cube_models.compiler import compile_query
from cube_models.model import Cube, Dimension, Measure, Segment, SemanticModel, load_model
from cube_models.validate import validate
from fourengine.fewshot_cache import parse_few_shots
from fourengine.glossary import parse_glossary
from warehouses.packs import Pack, get_pack
from warehouses.tpch.load import TABLES

KINDS = {"metric": Measure, "dimension": Dimension, "segment": Segment}


@pytest.fixture(scope="module")
def pack() -> Pack:
    return get_pack("tpch")


@pytest.fixture(scope="module")
def model(pack: Pack) -> SemanticModel:
    return load_model(pack.model_dir)


def _exists(model: SemanticModel, asset: str) -> bool:
    """``metric:<cube>.<measure>``, ``dimension:...``, ``segment:...`` or ``table:<cube>`` names a model member."""
    kind, _, name = asset.partition(":")
    if kind == "table":
        return name in model.cubes
    return isinstance(model.find_member(name), KINDS[kind])


def test_pack_yaml(pack: Pack) -> None:
    assert (pack.name, pack.schema, pack.today) == ("tpch", "tpch", dt.date(1998, 8, 2))
    assert callable(pack.loader())


def test_glossary_maps_to_members_of_the_model(pack: Pack, model: SemanticModel) -> None:
    terms, rules = parse_glossary(pack.glossary)
    assert len(terms) >= 40 and rules
    missing = [t.mapped_asset_id for t in terms if not _exists(model, t.mapped_asset_id)]
    missing += [a for r in rules for a in r["applies_to"] if not _exists(model, a)]
    assert missing == []
    synonyms = " ".join(s for t in terms for s in t.synonyms)
    for chinese in ("收入", "营收", "供应商", "市场细分", "国家", "地区"):
        assert chinese in synonyms


def test_glossary_values_are_values_of_string_dimensions(pack: Pack, model: SemanticModel) -> None:
    terms, _ = parse_glossary(pack.glossary)
    valued = [t for t in terms if t.filter_value is not None]
    assert len(valued) >= 40
    for term in valued:
        member = model.find_member(term.mapped_asset_id.partition(":")[2])
        assert isinstance(member, Dimension) and member.type == "string", term.term_id


def test_few_shots_compile(pack: Pack, model: SemanticModel) -> None:
    examples = parse_few_shots(pack.few_shots)
    assert len(examples) >= 10
    for example in examples:
        assert validate(example["cube_query"], model, today=pack.today) == [], example["question"]
        assert compile_query(example["cube_query"], model, today=pack.today).sql


def _front_matter(text: str) -> dict:
    assert text.startswith("---\n"), "a wiki page starts with YAML front matter"
    head, _, _ = text[4:].partition("\n---\n")
    return yaml.safe_load(head)


def test_wiki_has_one_page_per_table(pack: Pack) -> None:
    described: dict[str, list[str]] = {}
    for page in sorted(pack.wiki_dir.glob("*.md")):
        for table in _front_matter(page.read_text(encoding="utf-8"))["tables"]:
            described.setdefault(table, []).append(page.name)
    assert set(described) == set(TABLES)
    assert {"orders.zh.md", "lineitem.zh.md"} <= {p for pages in described.values() for p in pages}


def _untitled(cube: Cube) -> list[str]:
    members = [*cube.measures.values(), *cube.dimensions.values(), *cube.segments.values()]
    return [m.path for m in members if not m.title]


def test_every_cube_and_member_is_titled(model: SemanticModel) -> None:
    assert len(model.cubes) == 8
    for cube in model.cubes.values():
        assert cube.title and cube.description and cube.primary_keys, cube.name
        assert _untitled(cube) == []
        assert all(m.description for m in cube.measures.values() if m.filters or m.type == "number"), cube.name
    assert model.cube_time_dimension("orders") == "orders.order_date"
    lower_is_better = {m.path for m in model.measures() if m.meta.get("better") == "lower"}
    assert {"lineitem.late_count", "lineitem.avg_discount"} <= lower_is_better
