"""The refusal text's time range comes from the cubes whose rows are events, not from the dates of the
dimensions they point at (an employee's birth date)."""

from __future__ import annotations

from pathlib import Path

from answer.scope import model_scope
from cube_models.model import load_model

MODEL = """
cubes:
  - name: staff
    title: Staff
    sql_table: shop.staff
    joins:
      - {name: sales, relationship: one_to_many, sql: "{CUBE}.staff_id = {sales}.staff_id"}
    dimensions:
      - {name: staff_id, sql: staff_id, type: number, primary_key: true}
      - {name: born_on, sql: born_on, type: time}
  - name: sales
    title: Sales
    sql_table: shop.sales
    joins:
      - {name: staff, relationship: many_to_one, sql: "{CUBE}.staff_id = {staff}.staff_id"}
    dimensions:
      - {name: sale_id, sql: sale_id, type: number, primary_key: true}
      - {name: staff_id, sql: staff_id, type: number}
      - {name: sold_at, sql: sold_at, type: time}
    measures:
      - {name: count, type: count}
"""
RANGES = {"staff": ("1947-09", "1973-08"), "sales": ("2009-01", "2013-12")}


class Conn:
    def __init__(self) -> None:
        self.tables: list[str] = []

    def execute(self, query, params=None):
        text = query.as_string(None)
        table = next(t for t in RANGES if f'"{t}"' in text)
        self.tables.append(table)
        return self

    def fetchone(self):
        return RANGES[self.tables[-1]]


def test_the_period_is_that_of_the_event_cubes(tmp_path: Path) -> None:
    (tmp_path / "shop.yml").write_text(MODEL, encoding="utf-8")
    conn = Conn()
    scope = model_scope(load_model(tmp_path), conn, default_schema="shop")
    assert conn.tables == ["sales"] and scope.period == ("2009-01", "2013-12")
    assert scope.unsupported("en") == (
        "I can't answer that from the warehouse: it holds staff, sales (2009-01 to 2013-12)."
    )


def test_without_any_many_to_one_join_every_cube_counts(tmp_path: Path) -> None:
    (tmp_path / "shop.yml").write_text(
        MODEL.replace("relationship: many_to_one", "relationship: one_to_one"), encoding="utf-8"
    )
    scope = model_scope(load_model(tmp_path), Conn(), default_schema="shop")
    assert scope.period == ("1947-09", "2013-12")


class ChineseNames:
    def member_label(self, column: str, language: str) -> str | None:
        return {"sales": "销售"}.get(column) if language == "zh" else None


def test_chinese_refusals_name_the_cubes_the_glossary_names_in_chinese(tmp_path: Path) -> None:
    (tmp_path / "shop.yml").write_text(MODEL, encoding="utf-8")
    scope = model_scope(load_model(tmp_path), Conn(), default_schema="shop", names=ChineseNames())
    assert scope.unsupported("zh") == "这个问题超出了数据仓库的范围：仓库只有Staff、销售数据（2009-01 至 2013-12）。"
