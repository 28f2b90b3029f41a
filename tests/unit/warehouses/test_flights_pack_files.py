"""The nycflights13 pack's files without a database: pack.yaml, vendored data, glossary (demo format, every
reference a model member), few-shots, wiki front matter and the model's titles, synonyms and directions."""

from __future__ import annotations

import datetime as dt
import lzma
import re
from typing import Any

import pytest
import yaml

from cube_models.compiler import compile_query
from cube_models.model import Dimension, Measure, Segment, SemanticModel, load_model
from cube_models.validate import validate
from fourengine.fewshot_cache import parse_few_shots
from fourengine.glossary import parse_glossary
from warehouses.flights.load import TABLES, data_file, load
from warehouses.packs import get_pack, pack_names

PACK = get_pack("flights")
CJK = re.compile(r"[\u4e00-\u9fff]")
KINDS = {"metric": Measure, "dimension": Dimension, "segment": Segment}
TERM_KEYS = {"id", "term", "language", "maps_to", "synonyms", "definition"}


@pytest.fixture(scope="module")
def model() -> SemanticModel:
    return load_model(PACK.model_dir)


@pytest.fixture(scope="module")
def glossary() -> dict[str, Any]:
    return yaml.safe_load(PACK.glossary.read_text(encoding="utf-8"))


def _exists(model: SemanticModel, asset: str) -> bool:
    kind, _, name = asset.partition(":")
    if kind == "table":
        return name in model.cubes
    return isinstance(model.find_member(name), KINDS[kind])


def test_pack_yaml_is_found() -> None:
    assert "flights" in pack_names()
    assert (PACK.name, PACK.schema, PACK.today) == ("flights", "flights", dt.date(2014, 1, 1))
    assert PACK.loader() is load


def test_every_table_has_a_vendored_csv_with_a_header() -> None:
    for table in TABLES:
        with lzma.open(data_file(table), "rt", encoding="utf-8") as fh:
            header = fh.readline().strip().split(",")
        assert len(header) >= 2 and all(re.fullmatch(r"[a-z_]+", c) for c in header), table
    with pytest.raises(FileNotFoundError, match="data file missing"):
        data_file("no_such_table")


def test_a_bad_schema_name_is_refused_before_connecting() -> None:
    with pytest.raises(ValueError, match="schema must be"):
        load("postgresql://nobody@127.0.0.1:1/none", "flights; DROP TABLE x")


def test_glossary_has_the_demo_format(glossary: dict[str, Any]) -> None:
    assert set(glossary) == {"terms", "business_rules"}
    for term in glossary["terms"]:  # an unquoted comma in a flow mapping would add a stray key
        assert set(term) - {"filter_value"} == TERM_KEYS, term["id"]
        assert term["language"] in {"en", "zh"} and term["definition"] and term["synonyms"], term["id"]
    terms, rules = parse_glossary(PACK.glossary)
    assert len(terms) >= 40 and len(rules) >= 5
    assert sum(1 for t in terms if any(CJK.search(s) for s in t.synonyms)) >= 40
    synonyms = " ".join(s for t in terms for s in t.synonyms)
    for chinese in ("航班数", "取消率", "准点率", "平均起飞延误", "航空公司", "目的地", "机型"):
        assert chinese in synonyms


def test_glossary_refers_to_members_of_the_model(model: SemanticModel) -> None:
    terms, rules = parse_glossary(PACK.glossary)
    missing = [t.mapped_asset_id for t in terms if not _exists(model, t.mapped_asset_id)]
    missing += [a for r in rules for a in r["applies_to"] if not _exists(model, a)]
    assert missing == []


def test_glossary_values_filter_string_dimensions(model: SemanticModel) -> None:
    terms, _ = parse_glossary(PACK.glossary)
    valued = [t for t in terms if t.filter_value is not None]
    assert len(valued) >= 25
    for term in valued:
        member = model.find_member(term.mapped_asset_id.partition(":")[2])
        assert isinstance(member, Dimension) and member.type == "string", term.term_id
    values = {t.filter_value for t in valued}
    assert {"EWR", "JFK", "LGA", "United Air Lines Inc.", "JetBlue Airways", "Delta Air Lines Inc."} <= values


def test_few_shots_validate_and_compile(model: SemanticModel) -> None:
    examples = parse_few_shots(PACK.few_shots)
    assert len(examples) >= 10
    assert any(CJK.search(e["question"]) for e in examples)
    for example in examples:
        assert validate(example["cube_query"], model, today=PACK.today) == [], example["question"]
        assert compile_query(example["cube_query"], model, today=PACK.today).sql


def _front_matter(text: str) -> dict[str, Any]:
    assert text.startswith("---\n"), "a wiki page starts with YAML front matter"
    head, _, _ = text[4:].partition("\n---\n")
    return yaml.safe_load(head)


def test_wiki_has_one_page_per_table() -> None:
    described: dict[str, list[str]] = {}
    for page in sorted(PACK.wiki_dir.glob("*.md")):
        for table in _front_matter(page.read_text(encoding="utf-8"))["tables"]:
            described.setdefault(table, []).append(page.name)
    assert set(described) == set(TABLES)
    assert {"flights.zh.md", "airlines.zh.md"} <= {p.name for p in PACK.wiki_dir.glob("*.zh.md")}


def test_every_cube_and_member_is_titled_and_self_contained(model: SemanticModel) -> None:
    assert set(model.cubes) == {"flights", "airlines", "planes", "origin_airports", "destination_airports", "weather"}
    for cube in model.cubes.values():
        assert cube.title and cube.description and cube.primary_keys, cube.name
        assert cube.sql_table and cube.sql_table.split(".")[0] == PACK.schema
        assert cube.sql_table.split(".")[1] in TABLES
        members = [*cube.measures.values(), *cube.dimensions.values(), *cube.segments.values()]
        assert [m.path for m in members if not m.title] == []
        for measure in cube.measures.values():
            assert measure.description and measure.meta.get("synonyms"), measure.path
    for path in sorted(PACK.model_dir.glob("*.yml")):
        assert not re.search(r"\{\{|\{%", path.read_text(encoding="utf-8")), path.name


def test_time_dimensions_and_directions(model: SemanticModel) -> None:
    assert model.cube_time_dimension("flights") == "flights.flight_date"
    assert model.cube_time_dimension("weather") == "weather.observed_at"
    lower = {m.path for m in model.measures() if m.meta.get("better") == "lower"}
    delays = {m.path for m in model.cubes["flights"].measures.values() if "delay" in m.name or "cancel" in m.name}
    assert {"flights.avg_dep_delay", "flights.cancellation_rate", "flights.delay_rate"} <= delays <= lower
    assert "flights.on_time_rate" not in lower
    chinese = [m.path for m in model.measures() if any(CJK.search(s) for s in m.meta["synonyms"])]
    assert len(chinese) >= 30
