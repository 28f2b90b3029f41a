"""Semantic-asset export: the model's cubes, measures, dimensions, segments and joins -> ``semlayer``.

Asset ids: ``table:<cube>``, ``metric:<cube>.<measure>``, ``dimension:<cube>.<dim>``,
``segment:<cube>.<seg>``, ``join:<left>-><right>``, plus ``semlayer.join_edge`` rows and one
embedding per asset (text = title + name + description). Idempotent: each asset carries a content
hash; a re-export changes nothing, a changed model updates only what changed and deletes only
assets this exporter wrote (``meta.source = "cube_models"``) whose member disappeared.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp

from cube_models._refs import PLACEHOLDER_PREFIX, Ref, classify, to_placeholders
from cube_models.errors import ModelError
from cube_models.model import Cube, Dimension, Join, Measure, Segment, SemanticModel, load_model
from cubesage_core.db import connection
from cubesage_core.embeddings import Embedder, get_embedder
from cubesage_core.settings import Settings, get_settings

SOURCE = "cube_models"
FANOUT_RISK = {"many_to_one": "low", "one_to_one": "low", "one_to_many": "high"}
_LOCK_KEY = 4243


@dataclass(frozen=True)
class AssetRow:
    asset_id: str
    asset_type: str
    name: str
    title: str
    description: str
    parent_id: str | None
    certified: bool
    meta: dict[str, Any]

    @property
    def text(self) -> str:
        return " ".join(p for p in (self.title, self.name, self.description) if p)

    @property
    def content_hash(self) -> str:
        return _hash(asdict(self))


@dataclass(frozen=True)
class EdgeRow:
    edge_id: str
    left_table: str
    right_table: str
    on_sql: str
    relationship: str
    fanout_risk: str

    @property
    def content_hash(self) -> str:
        return _hash(asdict(self))


@dataclass
class ExportReport:
    inserted: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0
    embedded: int = 0
    edges_inserted: int = 0
    edges_updated: int = 0
    edges_deleted: int = 0
    edges_unchanged: int = 0
    changed_ids: list[str] = field(default_factory=list)

    def as_counts(self) -> dict[str, Any]:
        """The counts under the ingest API's names (added/updated/unchanged/removed)."""
        return {
            "added": self.inserted,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "removed": self.deleted,
            "embedded": self.embedded,
            "edges": {
                "added": self.edges_inserted,
                "updated": self.edges_updated,
                "removed": self.edges_deleted,
                "unchanged": self.edges_unchanged,
            },
        }


def _hash(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()[:32]


def main_table(cube: Cube) -> str | None:
    """The physical table of a cube: ``sql_table``, else the first FROM table of its SQL (via sqlglot)."""
    if cube.sql_table:
        return cube.sql_table
    tree = sqlglot.parse_one(to_placeholders(cube.sql or "")[0], read="postgres")
    select = tree if isinstance(tree, exp.Select) else tree.find(exp.Select)
    from_ = select.args.get("from_") or select.args.get("from") if select is not None else None
    table = from_.find(exp.Table) if from_ is not None else None
    if table is None:
        return None
    return ".".join(p for p in (table.catalog, table.db, table.name) if p)


def plain_sql(cube: Cube, sql: str, model: SemanticModel) -> str:
    """Join/member SQL with ``{CUBE}``/``{cube}`` references replaced by cube names and bare columns prefixed
    with the cube name (AST substitution)."""
    refs = classify(sql, cube.name, set(model.cubes), {*cube.measures, *cube.dimensions, *cube.segments})
    tree = sqlglot.parse_one(to_placeholders(sql)[0], read="postgres")

    def name_of(ident: str) -> str | None:
        if not ident.startswith(PLACEHOLDER_PREFIX):
            return None
        ref = refs[int(ident[len(PLACEHOLDER_PREFIX) :])][1]
        if not isinstance(ref, Ref):
            return None
        return ref.cube if ref.kind == "cube" else ref.path

    def swap(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Column):
            table = name_of(node.table) if node.table else None
            if table:
                return exp.column(node.name, table=table)
            member = name_of(node.name)
            if member and "." in member:
                c, m = member.split(".", 1)
                return exp.column(m, table=c)
            if member:
                return exp.column(member)
            if not node.table:
                return exp.column(node.name, table=cube.name)
        return node

    return tree.transform(swap).sql(dialect="postgres")


def _formula(cube: Cube, measure: Measure, model: SemanticModel) -> str:
    """A readable formula: ``sum(loans.fee)``; number measures keep their expression."""
    inner = plain_sql(cube, measure.sql, model) if measure.sql else "*"
    if measure.type == "number":
        return inner
    if measure.type.startswith("count_distinct"):
        return f"count(DISTINCT {inner})"
    return f"{measure.type}({inner})"


def build_assets(model: SemanticModel) -> tuple[list[AssetRow], list[EdgeRow]]:
    """Every asset row and join edge the model defines (parents before children)."""
    assets = [_table_row(cube, model) for cube in model.cubes.values()]
    edges: list[EdgeRow] = []
    for cube in model.cubes.values():
        table_id = f"table:{cube.name}"
        assets += [_metric_row(cube, m, table_id, model) for m in cube.measures.values()]
        assets += [_dimension_row(cube, d, table_id, model) for d in cube.dimensions.values()]
        assets += [_segment_row(cube, seg, table_id, model) for seg in cube.segments.values()]
        for j in cube.joins:
            edge = _edge_row(cube, j, model)
            edges.append(edge)
            assets.append(_join_row(edge))
    return assets, edges


def _table_row(cube: Cube, model: SemanticModel) -> AssetRow:
    """The asset of a cube: its table, primary key, time dimension and file."""
    pks = [d.name for d in cube.primary_keys]
    return AssetRow(
        f"table:{cube.name}",
        "table",
        cube.name,
        cube.title or cube.name,
        cube.description,
        None,
        bool(cube.meta.get("certified", False)),
        {
            "source": SOURCE,
            "sql_table": main_table(cube),
            "primary_key": pks[0] if len(pks) == 1 else (pks or None),
            "time_dimension": model.cube_time_dimension(cube.name),
            "cube_sql": cube.sql,
            "file": Path(cube.file).name,
            "user_meta": cube.meta,
        },
    )


def _metric_row(cube: Cube, m: Measure, table_id: str, model: SemanticModel) -> AssetRow:
    """The asset of a measure: its aggregation, SQL, readable formula, filters and time dimension."""
    return AssetRow(
        f"metric:{m.path}",
        "metric",
        m.path,
        m.title or m.name,
        m.description,
        table_id,
        bool(m.meta.get("certified", False)),
        {
            "source": SOURCE,
            "cube": cube.name,
            "agg": m.type,
            "sql": plain_sql(cube, m.sql, model) if m.sql else None,
            "template": m.sql,
            "formula": _formula(cube, m, model),
            "filters": [plain_sql(cube, f, model) for f in m.filters],
            "format": m.format,
            "time_dimension": model.time_dimension_for(m.path),
            "public": m.public,
            "user_meta": m.meta,
        },
    )


def _dimension_row(cube: Cube, d: Dimension, table_id: str, model: SemanticModel) -> AssetRow:
    return AssetRow(
        f"dimension:{d.path}",
        "dimension",
        d.path,
        d.title or d.name,
        d.description,
        table_id,
        False,
        {
            "source": SOURCE,
            "cube": cube.name,
            "type": d.type,
            "sql": plain_sql(cube, d.sql, model),
            "primary_key": d.primary_key,
            "format": d.format,
            "public": d.public,
            "user_meta": d.meta,
        },
    )


def _segment_row(cube: Cube, s: Segment, table_id: str, model: SemanticModel) -> AssetRow:
    return AssetRow(
        f"segment:{s.path}",
        "segment",
        s.path,
        s.title or s.name,
        s.description,
        table_id,
        False,
        {"source": SOURCE, "cube": cube.name, "sql": plain_sql(cube, s.sql, model), "user_meta": s.meta},
    )


def _edge_row(cube: Cube, j: Join, model: SemanticModel) -> EdgeRow:
    """A join's edge: its ON condition in plain SQL and the fan-out risk of its relationship."""
    return EdgeRow(
        j.edge_id, j.source, j.target, plain_sql(cube, j.sql, model), j.relationship, FANOUT_RISK[j.relationship]
    )


def _join_row(edge: EdgeRow) -> AssetRow:
    """The asset of a join edge."""
    return AssetRow(
        f"join:{edge.edge_id}",
        "join",
        edge.edge_id,
        f"{edge.left_table} to {edge.right_table}",
        edge.on_sql,
        None,
        False,
        {
            "source": SOURCE,
            "left_table": f"table:{edge.left_table}",
            "right_table": f"table:{edge.right_table}",
            "left_cube": edge.left_table,
            "right_cube": edge.right_table,
            "relationship": edge.relationship,
            "fanout_risk": edge.fanout_risk,
            "on_sql": edge.on_sql,
        },
    )


def export_assets(url: str, model: SemanticModel, embedder: Embedder | None = None) -> ExportReport:
    """Write the model's assets, embeddings and join edges to ``url`` (idempotent, one transaction)."""
    assets, edges = build_assets(model)
    report = ExportReport()
    with connection(url) as conn, conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        existing = dict(
            conn.execute(
                "SELECT asset_id, content_hash FROM semlayer.asset WHERE meta->>'source' = %s", (SOURCE,)
            ).fetchall()
        )
        wanted = {a.asset_id for a in assets}
        gone = [aid for aid in existing if aid not in wanted]
        old_edges = dict(
            conn.execute(
                "SELECT edge_id, content_hash FROM semlayer.join_edge WHERE 'join:' || edge_id = ANY(%s) "
                "OR edge_id = ANY(%s)",
                (list(existing), [e.edge_id for e in edges]),
            ).fetchall()
        )
        if gone:
            conn.execute("DELETE FROM semlayer.asset WHERE asset_id = ANY(%s)", (gone,))
            report.deleted = len(gone)
        changed = _changed(assets, existing, report)
        if changed:
            _upsert_assets(conn, changed)
        report.changed_ids = [a.asset_id for a in changed]
        report.embedded = _embed(conn, assets, embedder)
        _write_edges(conn, edges, old_edges, report)
    return report


def _changed(assets: list[AssetRow], existing: dict[str, str], report: ExportReport) -> list[AssetRow]:
    """The assets whose content hash differs from the stored one (counted as inserted, updated or unchanged)."""
    changed: list[AssetRow] = []
    for a in assets:
        old = existing.get(a.asset_id)
        if old == a.content_hash:
            report.unchanged += 1
            continue
        changed.append(a)
        if old is None:
            report.inserted += 1
        else:
            report.updated += 1
    return changed


def _upsert_assets(conn: Any, changed: list[AssetRow]) -> None:
    with conn.cursor() as cur:
        cur.executemany(
            """INSERT INTO semlayer.asset (asset_id, asset_type, name, title, description, parent_id,
                                           certified, meta, content_hash, updated_at)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, now())
               ON CONFLICT (asset_id) DO UPDATE SET asset_type = EXCLUDED.asset_type,
                 name = EXCLUDED.name, title = EXCLUDED.title, description = EXCLUDED.description,
                 parent_id = EXCLUDED.parent_id, certified = EXCLUDED.certified, meta = EXCLUDED.meta,
                 content_hash = EXCLUDED.content_hash, updated_at = now()""",
            [
                (
                    a.asset_id,
                    a.asset_type,
                    a.name,
                    a.title,
                    a.description,
                    a.parent_id,
                    a.certified,
                    json.dumps(a.meta, ensure_ascii=False),
                    a.content_hash,
                )
                for a in changed
            ],
        )


def _embed(conn: Any, assets: list[AssetRow], embedder: Embedder | None) -> int:
    known = dict(
        conn.execute(
            "SELECT asset_id, text_hash FROM semlayer.asset_embedding WHERE asset_id = ANY(%s)",
            ([a.asset_id for a in assets],),
        ).fetchall()
    )
    todo = [a for a in assets if known.get(a.asset_id) != _hash(a.text)]
    if not todo:
        return 0
    embedder = embedder or get_embedder()
    with conn.cursor() as cur:
        for start in range(0, len(todo), 256):
            chunk = todo[start : start + 256]
            vectors = embedder.embed([a.text for a in chunk])
            cur.executemany(
                """INSERT INTO semlayer.asset_embedding (asset_id, embedding, text_hash) VALUES (%s, %s, %s)
                   ON CONFLICT (asset_id)
                   DO UPDATE SET embedding = EXCLUDED.embedding, text_hash = EXCLUDED.text_hash""",
                [(a.asset_id, vec, _hash(a.text)) for a, vec in zip(chunk, vectors, strict=True)],
            )
    return len(todo)


def _write_edges(conn: Any, edges: list[EdgeRow], old: dict[str, str], report: ExportReport) -> None:
    wanted = {e.edge_id for e in edges}
    gone = [eid for eid in old if eid not in wanted]
    if gone:
        conn.execute("DELETE FROM semlayer.join_edge WHERE edge_id = ANY(%s)", (gone,))
        report.edges_deleted = len(gone)
    changed = []
    for e in edges:
        if old.get(e.edge_id) == e.content_hash:
            report.edges_unchanged += 1
            continue
        changed.append(e)
        if e.edge_id in old:
            report.edges_updated += 1
        else:
            report.edges_inserted += 1
    if changed:
        with conn.cursor() as cur:
            cur.executemany(
                """INSERT INTO semlayer.join_edge (edge_id, left_table, right_table, on_sql, relationship,
                                                  fanout_risk, content_hash)
                   VALUES (%s, %s, %s, %s, %s, %s, %s)
                   ON CONFLICT (edge_id) DO UPDATE SET left_table = EXCLUDED.left_table,
                     right_table = EXCLUDED.right_table, on_sql = EXCLUDED.on_sql,
                     relationship = EXCLUDED.relationship, fanout_risk = EXCLUDED.fanout_risk,
                     content_hash = EXCLUDED.content_hash""",
                [
                    (e.edge_id, e.left_table, e.right_table, e.on_sql, e.relationship, e.fanout_risk, e.content_hash)
                    for e in changed
                ],
            )


def ingest_files(
    url: str, files: list[dict[str, str]], settings: Settings | None = None, embedder: Embedder | None = None
) -> dict[str, Any]:
    """Uploaded YAML files (``{"name", "content"}``) overlaid on ``settings.model_dir`` by file name: the merged
    model is validated first (``ModelError`` on any problem, nothing written), then the files are saved into
    the model folder and the assets exported. Returns the export counts."""
    settings = settings or get_settings()
    model_dir = Path(settings.model_folder())
    for f in files:
        name = f.get("name", "")
        if Path(name).name != name or not name.endswith((".yml", ".yaml")):
            raise ModelError(f"bad model file name {name!r}")
    with tempfile.TemporaryDirectory(prefix="cubesage-models-") as tmp:
        staging = Path(tmp)
        if model_dir.exists():
            for path in model_dir.glob("*.y*ml"):
                shutil.copy2(path, staging / path.name)
        for f in files:
            (staging / f["name"]).write_text(f.get("content", ""), encoding="utf-8")
        model = load_model(staging)
        model_dir.mkdir(parents=True, exist_ok=True)
        for f in files:
            target = model_dir / f["name"]
            partial = target.with_suffix(target.suffix + ".tmp")
            partial.write_text(f.get("content", ""), encoding="utf-8")
            partial.replace(target)
    report = export_assets(
        url,
        load_model(model_dir) if model_dir.exists() else model,
        embedder=embedder or get_embedder(settings.embedding_backend),
    )
    return {**report.as_counts(), "cubes": len(model.cubes), "files": [f["name"] for f in files]}
