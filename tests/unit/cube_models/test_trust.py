"""Cube models from outside may read only the configured warehouse schemas (cube_models.trust)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cube_models.model import load_model
from cube_models.trust import model_problems

ROOT = Path(__file__).resolve().parents[3]


def _model(tmp_path: Path, cube: str) -> object:
    (tmp_path / "m.yml").write_text("cubes:\n" + cube)
    return load_model(tmp_path)


@pytest.mark.parametrize(
    ("pack", "schemas"),
    [("demo/model", ["warehouse"]), ("warehouses/tpch/model", ["tpch"]), ("warehouses/chinook/model", ["chinook"])],
)
def test_packaged_models_are_trusted(pack: str, schemas: list[str]) -> None:
    assert model_problems(load_model(ROOT / pack), schemas) == []


@pytest.mark.parametrize(
    ("cube", "expected"),
    [
        ("  - name: r\n    sql_table: pg_catalog.pg_roles\n", "outside the warehouse schemas"),
        ("  - name: r\n    sql_table: semlayer.api_key\n", "outside the warehouse schemas"),
        ("  - name: r\n    sql: SELECT * FROM pg_roles\n", "must be qualified"),
        ("  - name: r\n    sql: SELECT * FROM warehouse.t JOIN information_schema.tables x ON true\n", "outside"),
        ("  - name: r\n    sql: SELECT pg_read_file('/etc/passwd') AS x FROM warehouse.t\n", "pg_read_file"),
        ("  - name: r\n    sql: SELECT * FROM generate_series(1, 3)\n", "table function"),
        ("  - name: r\n    sql: SELECT * FROM other.warehouse.t\n", "cross-database"),
        (
            "  - name: r\n    sql_table: warehouse.t\n    dimensions:\n      - name: secret\n        type: string\n"
            "        sql: (SELECT rolpassword FROM pg_catalog.pg_authid LIMIT 1)\n",
            "dimension secret",
        ),
        (
            "  - name: r\n    sql_table: warehouse.t\n    measures:\n      - name: m\n        type: sum\n"
            '        sql: "{CUBE}.amount + (SELECT count(*) FROM semlayer.api_key)"\n',
            "measure m",
        ),
        (
            "  - name: r\n    sql_table: warehouse.t\n    segments:\n      - name: s\n"
            "        sql: \"dblink_exec('x', 'y') IS NOT NULL\"\n",
            "dblink_exec",
        ),
    ],
)
def test_foreign_references_are_found(tmp_path: Path, cube: str, expected: str) -> None:
    problems = model_problems(_model(tmp_path, cube), ["warehouse"])
    assert problems and any(expected in p for p in problems), problems


def test_only_the_given_files_are_checked(tmp_path: Path) -> None:
    model = _model(tmp_path, "  - name: r\n    sql_table: pg_catalog.pg_roles\n")
    assert model_problems(model, ["warehouse"], files=["other.yml"]) == []
    assert model_problems(model, ["warehouse"], files=["m.yml"])
    assert model_problems(model, ["warehouse", "pg_catalog"]) == []  # configured schemas are the rule
