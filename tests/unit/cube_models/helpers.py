"""Small helpers for cube_models unit tests: write YAML model folders."""

from __future__ import annotations

from pathlib import Path

import yaml

BASE = {
    "cubes": [
        {
            "name": "a",
            "sql_table": "s.a",
            "joins": [{"name": "b", "relationship": "many_to_one", "sql": "{CUBE}.b_id = {b}.id"}],
            "dimensions": [
                {"name": "id", "sql": "id", "type": "number", "primary_key": True},
                {"name": "b_id", "sql": "b_id", "type": "number"},
                {"name": "ts", "sql": "ts", "type": "time"},
            ],
            "measures": [{"name": "count", "type": "count"}, {"name": "total", "type": "sum", "sql": "amount"}],
        },
        {
            "name": "b",
            "sql_table": "s.b",
            "dimensions": [
                {"name": "id", "sql": "id", "type": "number", "primary_key": True},
                {"name": "label", "sql": "label", "type": "string"},
            ],
            "measures": [{"name": "count", "type": "count"}],
        },
    ]
}


def write_model(folder: Path, doc: dict, name: str = "model.yml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(yaml.safe_dump(doc, sort_keys=False))
    return folder


def base_doc() -> dict:
    return yaml.safe_load(yaml.safe_dump(BASE))
