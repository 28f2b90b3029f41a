"""Distinct counts summed from a rollup only when their key determines each rollup row (``_rollup_keys``), on a
small model of lines, their headers and the headers' groups."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from cube_models._rollup_keys import additive_over
from cube_models.compiler import compile_query
from cube_models.model import SemanticModel, load_model

MODEL_YAML = """cubes:
  - name: line
    sql_table: s.line
    joins:
      - {name: head, relationship: many_to_one, sql: "{CUBE}.head_id = {head}.id"}
      - {name: item, relationship: many_to_one, sql: "{CUBE}.item_id = {item}.id"}
    dimensions:
      - {name: id, sql: id, type: number, primary_key: true}
      - {name: head_id, sql: head_id, type: number}
      - {name: kind, sql: kind, type: string}
    measures:
      - {name: amount, sql: amount, type: sum}
      - {name: heads, sql: head_id, type: count_distinct}
      - {name: items, sql: "{CUBE}.item_id", type: count_distinct}
      - {name: per_head, type: number, sql: "{amount} / NULLIF({heads}, 0)"}
    pre_aggregations:
      - {name: by_group_day, measures: [CUBE.amount, CUBE.heads, CUBE.items], dimensions: [grp.name, head.channel],
         time_dimension: head.at, granularity: day}
      - {name: by_kind_day, measures: [CUBE.amount, CUBE.heads], dimensions: [CUBE.kind], time_dimension: head.at,
         granularity: day}
  - name: head
    sql_table: s.head
    joins:
      - {name: grp, relationship: many_to_one, sql: "{CUBE}.grp_id = {grp}.id"}
    dimensions:
      - {name: id, sql: id, type: number, primary_key: true}
      - {name: channel, sql: channel, type: string}
      - {name: at, sql: at, type: time}
    measures:
      - {name: count, sql: id, type: count_distinct}
    pre_aggregations:
      - {name: by_group, measures: [CUBE.count], dimensions: [grp.name], time_dimension: CUBE.at, granularity: month}
  - name: item
    sql_table: s.item
    dimensions:
      - {name: id, sql: id, type: number, primary_key: true}
  - name: grp
    sql_table: s.grp
    dimensions:
      - {name: id, sql: id, type: number, primary_key: true}
      - {name: name, sql: name, type: string}
"""
YEAR = {"dimension": "head.at", "dateRange": ["2024-01-01", "2024-12-31"]}


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> SemanticModel:
    folder: Path = tmp_path_factory.mktemp("keys")
    (folder / "m.yml").write_text(MODEL_YAML)
    return load_model(folder)


def _pre(model: SemanticModel, path: str):  # type: ignore[no-untyped-def]
    return next(p for p in model.pre_aggregations() if p.path == path)


def test_a_key_that_names_one_header_is_additive_over_the_headers_members(model: SemanticModel) -> None:
    heads = model.member("line.heads")
    assert additive_over(heads, _pre(model, "line.by_group_day"), model)  # group and channel are the header's
    assert not additive_over(heads, _pre(model, "line.by_kind_day"), model)  # a header's lines differ in kind
    assert not additive_over(model.member("line.items"), _pre(model, "line.by_group_day"), model)  # an item
    # appears on many headers, of several groups and days
    assert additive_over(model.member("head.count"), _pre(model, "head.by_group"), model)  # its own primary key


def test_matching_uses_a_key_additive_rollup_only_where_cubes_rules_find_none(model: SemanticModel) -> None:
    every = {p.path: f"r.{p.name}" for p in model.pre_aggregations()}

    def rollup(query: dict) -> str | None:
        return compile_query(query, model, date(2025, 6, 30), rollups=every).rollup

    assert (
        rollup({"measures": ["line.per_head"], "dimensions": ["head.channel"], "timeDimensions": [YEAR]})
        == "line.by_group_day"
    )
    assert rollup({"measures": ["line.per_head"], "dimensions": ["line.kind"], "timeDimensions": [YEAR]}) is None
    assert rollup({"measures": ["line.items"], "timeDimensions": [YEAR]}) is None
    compiled = compile_query({"measures": ["line.per_head"], "timeDimensions": [YEAR]}, model, rollups=every)
    assert 'SUM("__rollup"."line__heads")' in compiled.sql and "s.line" not in compiled.sql
