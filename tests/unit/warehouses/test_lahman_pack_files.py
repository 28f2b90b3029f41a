"""The Baseball Databank (Lahman) pack's files without a database: pack.yaml, vendored data with snake-case
headers, a model that validates, a glossary that refers to its members and wiki pages linked to tables.
The model, glossary and wiki were written by a helper who never read the answering code (the suite's header
says how); these checks only keep them loadable."""

from __future__ import annotations

import datetime as dt
import lzma
import re

import pytest
import yaml

from cube_models.model import Dimension, Measure, Segment, SemanticModel, load_model
from fourengine.glossary import parse_glossary
from warehouses.lahman.load import TABLES, data_file, load
from warehouses.packs import get_pack, pack_names

PACK = get_pack("lahman")
KINDS = {"metric": Measure, "dimension": Dimension, "segment": Segment}


@pytest.fixture(scope="module")
def model() -> SemanticModel:
    return load_model(PACK.model_dir)


def test_pack_yaml_is_found() -> None:
    assert "lahman" in pack_names()
    assert (PACK.name, PACK.schema, PACK.today) == ("lahman", "lahman", dt.date(2021, 1, 1))
    assert PACK.loader() is load


def test_every_table_has_a_vendored_csv_with_a_snake_case_header() -> None:
    for table in TABLES:
        with lzma.open(data_file(table), "rt", encoding="utf-8") as fh:
            header = fh.readline().strip().split(",")
        assert len(header) >= 2 and all(re.fullmatch(r"[a-z][a-z0-9_]*", c) for c in header), table
    with pytest.raises(FileNotFoundError, match="Baseball Databank data file missing"):
        data_file("no_such_table")


def test_the_model_reads_only_the_packs_tables(model: SemanticModel) -> None:
    tables = {c.sql_table.split(".")[1] for c in model.cubes.values() if c.sql_table}
    assert tables <= set(TABLES) and {"batting", "pitching", "people", "teams"} <= tables
    assert all(c.primary_keys for c in model.cubes.values())


def test_glossary_refers_to_members_of_the_model(model: SemanticModel) -> None:
    terms, _ = parse_glossary(PACK.glossary)
    assert len(terms) >= 25

    def exists(asset: str) -> bool:
        kind, _, name = asset.partition(":")
        return name in model.cubes if kind == "table" else isinstance(model.find_member(name), KINDS[kind])

    assert [t.mapped_asset_id for t in terms if not exists(t.mapped_asset_id)] == []


def test_wiki_pages_name_the_packs_tables() -> None:
    for page in sorted(PACK.wiki_dir.glob("*.md")):
        head = page.read_text(encoding="utf-8")[4:].partition("\n---\n")[0]
        assert set(yaml.safe_load(head)["tables"]) <= set(TABLES), page.name
