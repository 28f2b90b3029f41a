"""The dynamic few-shot cache (engine D's store): load approved examples, add, approve, reject.

File format (see demo/few_shots.yaml)::

    examples:
      - question: late fees by branch this quarter
        cube_query: {measures: [loans.fee_sum], dimensions: [branches.branch_name], ...}
        sql: optional SQL
        approved: true        # default for a curated file

``validate_members`` checks a Cube query's members against Cube YAML models.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from psycopg.types.json import Jsonb

from cubesage_core import safe_yaml
from cubesage_core.db import connection, one
from cubesage_core.embeddings import Embedder, get_embedder

MEMBER_KEYS = ("measures", "dimensions", "segments")


class FewShotError(ValueError):
    """A malformed example or an unknown example id."""


@dataclass
class FewShotReport:
    examples: int
    inserted: int
    updated: int


def model_members(model_dir: Path) -> set[str]:
    """``cube.member`` names (measures, dimensions, segments) defined by the Cube YAML files of ``model_dir``."""
    members: set[str] = set()
    for path in sorted(Path(model_dir).glob("*.yml")) + sorted(Path(model_dir).glob("*.yaml")):
        for cube in (safe_yaml.load(path.read_text()) or {}).get("cubes", []):
            for kind in MEMBER_KEYS:
                members.update(f"{cube['name']}.{m['name']}" for m in cube.get(kind) or [])
    return members


def query_members(cube_query: dict[str, Any]) -> set[str]:
    used = {m for key in MEMBER_KEYS for m in cube_query.get(key) or []}
    used |= {t["dimension"] for t in cube_query.get("timeDimensions") or []}
    used |= {f["member"] for f in cube_query.get("filters") or [] if "member" in f}
    order = cube_query.get("order")
    if isinstance(order, dict):
        used |= set(order)
    elif isinstance(order, list):
        used |= {pair[0] for pair in order if pair}
    return used


def validate_members(cube_query: dict[str, Any], members: set[str]) -> list[str]:
    """Members of ``cube_query`` that the model does not define."""
    return sorted(query_members(cube_query) - members)


def parse_few_shots(path: Path) -> list[dict[str, Any]]:
    try:
        data = safe_yaml.load(Path(path).read_text(encoding="utf-8")) or {}
    except (OSError, safe_yaml.YamlLimitError) as exc:
        raise FewShotError(f"cannot read few-shots {path}: {exc}") from exc
    out = []
    for i, item in enumerate(data.get("examples") or []):
        if not isinstance(item, dict) or not str(item.get("question", "")).strip():
            raise FewShotError(f"{path}: examples[{i}] needs a question")
        if not item.get("cube_query") and not item.get("sql"):
            raise FewShotError(f"{path}: examples[{i}] needs a cube_query or sql")
        if item.get("cube_query") is not None and not isinstance(item["cube_query"], dict):
            raise FewShotError(f"{path}: examples[{i}].cube_query must be a mapping")
        cube_query = item.get("cube_query")
        if cube_query is not None:  # YAML dates (2025-04-01) -> ISO strings, as Cube expects
            cube_query = json.loads(json.dumps(cube_query, default=str))
        out.append(
            {
                "question": str(item["question"]).strip(),
                "cube_query": cube_query,
                "sql": item.get("sql"),
                "approved": bool(item.get("approved", True)),
            }
        )
    return out


def _upsert(
    conn: psycopg.Connection,
    examples: list[dict[str, Any]],
    embedder: Embedder,
) -> tuple[int, int, list[int]]:
    vectors = embedder.embed([e["question"] for e in examples]) if examples else np.zeros((0, 0))
    inserted = updated = 0
    ids = []
    for example, vec in zip(examples, vectors, strict=True):
        row = conn.execute(
            """INSERT INTO semlayer.dynamic_few_shot_cache (question, embedding, cube_query, sql, approved)
               VALUES (%s, %s, %s, %s, %s)
               ON CONFLICT (question) DO UPDATE SET embedding = EXCLUDED.embedding,
                 cube_query = EXCLUDED.cube_query, sql = EXCLUDED.sql, approved = EXCLUDED.approved
               RETURNING id, (xmax = 0)""",
            (
                example["question"],
                vec,
                Jsonb(example["cube_query"]) if example["cube_query"] is not None else None,
                example["sql"],
                example["approved"],
            ),
        ).fetchone()
        row = one(row)
        ids.append(int(row[0]))
        inserted += bool(row[1])
        updated += not row[1]
    return inserted, updated, ids


def load_few_shots(url: str, path: Path, embedder: Embedder | None = None) -> FewShotReport:
    """Upsert the examples of ``path`` (by question; idempotent; hit counters kept)."""
    examples = parse_few_shots(path)
    with connection(url) as conn, conn.transaction():
        inserted, updated, _ = _upsert(conn, examples, embedder or get_embedder())
    return FewShotReport(len(examples), inserted, updated)


def add_example(
    url: str,
    question: str,
    *,
    cube_query: dict[str, Any] | None = None,
    sql: str | None = None,
    approved: bool = False,
    embedder: Embedder | None = None,
) -> int:
    """Add (or update) one example, unapproved by default (e.g. from a repaired query); returns its id."""
    if not question.strip():
        raise FewShotError("question is empty")
    if cube_query is None and not sql:
        raise FewShotError("an example needs a cube_query or sql")
    example = {"question": question.strip(), "cube_query": cube_query, "sql": sql, "approved": approved}
    with connection(url) as conn:
        return _upsert(conn, [example], embedder or get_embedder())[2][0]


def _set_approved(url: str, example_id: int, approved: bool) -> None:
    with connection(url) as conn:
        cur = conn.execute(
            "UPDATE semlayer.dynamic_few_shot_cache SET approved = %s WHERE id = %s", (approved, example_id)
        )
        if cur.rowcount == 0:
            raise FewShotError(f"no few-shot example with id {example_id}")


def approve(url: str, example_id: int) -> None:
    """Approve an example: engine D may now return it."""
    _set_approved(url, example_id, True)


def reject(url: str, example_id: int) -> None:
    """Reject (unapprove) an example: engine D no longer returns it."""
    _set_approved(url, example_id, False)
