"""The Chinook pack's files without a database: pack.yaml, the glossary (format of the demo's, every
``maps_to`` an existing model member), the wiki front matter and the model's readability."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from cube_models.model import SemanticModel, load_model
from cubesage_core.settings import REPO_ROOT
from warehouses.chinook.load import TABLES, read_fixture
from warehouses.packs import get_pack, pack_names

PACK = get_pack("chinook")
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def model() -> SemanticModel:
    return load_model(PACK.model_dir)


@pytest.fixture(scope="module")
def glossary() -> dict[str, Any]:
    return yaml.safe_load(PACK.glossary.read_text(encoding="utf-8"))


TERM_KEYS = {"id", "term", "language", "maps_to", "synonyms", "definition"}
RULE_KEYS = {"id", "title", "applies_to", "text"}


def asset_exists(model: SemanticModel, ref: str) -> bool:
    kind, _, path = ref.partition(":")
    if kind == "table":
        return path in model.cubes
    member = model.find_member(path)
    expected = {"metric": "measure", "dimension": "dimension", "segment": "segment"}.get(kind)
    return member is not None and member.kind == expected


def test_pack_yaml_is_found() -> None:
    assert "chinook" in pack_names()
    assert (PACK.schema, str(PACK.today)) == ("chinook", "2011-12-23")


def test_glossary_has_the_demo_format(glossary: dict[str, Any]) -> None:
    demo = yaml.safe_load((REPO_ROOT / "demo" / "glossary.yaml").read_text(encoding="utf-8"))
    assert set(glossary) == set(demo) == {"terms", "business_rules"}
    for term in glossary["terms"]:  # an unquoted comma in a flow mapping would add a stray key
        assert set(term) - {"filter_value"} == TERM_KEYS, term["id"]
    assert all(set(rule) == RULE_KEYS for rule in glossary["business_rules"])
    ids = [t["id"] for t in glossary["terms"]]
    assert len(ids) == len(set(ids)) and len(ids) >= 40
    for term in glossary["terms"]:
        assert term["language"] in {"en", "zh"} and term["definition"] and term["synonyms"], term["id"]
    assert sum(1 for t in glossary["terms"] if any(CJK.search(s) for s in t["synonyms"])) >= 40


def test_every_glossary_reference_names_an_existing_member(glossary: dict[str, Any], model: SemanticModel) -> None:
    refs = [t["maps_to"] for t in glossary["terms"]]
    refs += [ref for rule in glossary["business_rules"] for ref in rule["applies_to"]]
    assert [ref for ref in refs if not asset_exists(model, ref)] == []


def test_glossary_filter_values_occur_in_the_data(glossary: dict[str, Any]) -> None:
    values = {v for records in read_fixture().values() for r in records for v in r.values() if isinstance(v, str)}
    wanted = [t["filter_value"] for t in glossary["terms"] if "filter_value" in t]
    assert wanted and [v for v in wanted if v not in values] == []


def test_every_table_has_a_wiki_page_with_front_matter() -> None:
    described: set[str] = set()
    for page in PACK.wiki_dir.glob("*.md"):
        text = page.read_text(encoding="utf-8")
        match = re.match(r"---\n(.*?)\n---\n", text, re.S)
        assert match, page.name
        described |= set(yaml.safe_load(match.group(1))["tables"])
    assert described == {t.name for t in TABLES}
    assert {"invoice.zh.md", "track.zh.md"} <= {p.name for p in PACK.wiki_dir.glob("*.zh.md")}


def test_model_is_readable_and_self_contained(model: SemanticModel) -> None:
    assert sorted(c.sql_table for c in model.cubes.values()) == sorted(f"chinook.{t.name}" for t in TABLES)
    for cube in model.cubes.values():
        assert cube.title and cube.description, cube.name
        for member in (*cube.measures.values(), *cube.dimensions.values()):
            assert member.title, member.path
    for path in sorted(PACK.model_dir.glob("*.yml")):
        assert not re.search(r"\{\{|\{%", path.read_text(encoding="utf-8")), path.name
