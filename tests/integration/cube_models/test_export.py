"""Semantic-asset export into a fresh database: contents, idempotency, incremental updates, safe deletes."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cube_models.export import export_assets, ingest_files
from cube_models.model import load_model
from cubesage_core import db
from cubesage_core.embeddings import get_embedder
from cubesage_core.scratch import drop_database, scratch_database
from cubesage_core.settings import REPO_ROOT, Settings

pytestmark = pytest.mark.integration
DB_NAME = "cube_models_export_it"
EMB = get_embedder("hash")


@pytest.fixture(scope="module")
def export_url(pg_url: str) -> Iterator[str]:
    yield scratch_database(pg_url, DB_NAME, fresh=True)
    drop_database(pg_url, DB_NAME)


def _rows(url: str, sql: str, *params: object) -> list[tuple]:
    with db.connection(url) as conn:
        return conn.execute(sql, params).fetchall()


def test_export_is_complete_idempotent_and_incremental(export_url: str, tmp_path: Path) -> None:
    # an asset of another writer (glossary term) that export must never touch
    with db.connection(export_url) as conn:
        conn.execute(
            "INSERT INTO semlayer.asset (asset_id, asset_type, name, meta) VALUES "
            "('term:gmv', 'term', 'GMV', '{\"source\": \"glossary\"}') ON CONFLICT DO NOTHING"
        )
    folder = tmp_path / "model"
    shutil.copytree(REPO_ROOT / "demo" / "model", folder)
    model = load_model(folder)
    first = export_assets(export_url, model, embedder=EMB)
    assert first.inserted > 80 and first.updated == first.deleted == first.unchanged == 0
    assert first.embedded == first.inserted and first.edges_inserted == 10

    gmv = _rows(
        export_url,
        "SELECT asset_type, parent_id, certified, meta FROM semlayer.asset WHERE asset_id = 'metric:order_items.gmv'",
    )[0]
    assert gmv[:3] == ("metric", "table:order_items", True)
    assert gmv[3]["agg"] == "sum" and gmv[3]["time_dimension"] == "orders.order_ts"
    table = _rows(export_url, "SELECT meta FROM semlayer.asset WHERE asset_id = 'table:orders'")[0][0]
    assert table["sql_table"] == "warehouse.fact_order" and table["primary_key"] == "order_id"
    assert table["time_dimension"] == "orders.order_ts"
    edge = _rows(
        export_url,
        "SELECT left_table, right_table, relationship, fanout_risk, on_sql "
        "FROM semlayer.join_edge WHERE edge_id = 'orders->order_items'",
    )[0]
    assert edge[:4] == ("orders", "order_items", "one_to_many", "high") and "order_items.order_id" in edge[4]
    assert (
        _rows(
            export_url,
            "SELECT count(*) FROM semlayer.asset a LEFT JOIN semlayer.asset_embedding e "
            "USING (asset_id) WHERE a.meta->>'source' = 'cube_models' AND e.asset_id IS NULL",
        )[0][0]
        == 0
    )
    stamp = _rows(export_url, "SELECT max(updated_at) FROM semlayer.asset")[0][0]

    again = export_assets(export_url, model, embedder=EMB)
    assert (again.inserted, again.updated, again.deleted, again.embedded) == (0, 0, 0, 0)
    assert again.unchanged == first.inserted and again.edges_unchanged == 10
    assert _rows(export_url, "SELECT max(updated_at) FROM semlayer.asset")[0][0] == stamp

    # change one description, drop one measure, add a dimension, drop a join
    text = (folder / "orders.yml").read_text()
    text = text.replace("Where the order was placed (web, app, store).", "Sales channel of the order.")
    text = text.replace(
        """      - name: pending_count
        title: Pending orders
        type: count
        filters:
          - sql: "{CUBE}.status = 'pending'"
""",
        "",
    )
    (folder / "orders.yml").write_text(text)
    products = (
        (folder / "products.yml")
        .read_text()
        .replace(
            "      - name: brand\n",
            "      - name: brand_upper\n        sql: upper(brand)\n        type: string\n      - name: brand\n",
        )
    )
    (folder / "products.yml").write_text(products)
    refunds = (folder / "refunds.yml").read_text()
    refunds = refunds.replace(
        """    joins:
      - name: orders
        relationship: many_to_one
        sql: "{CUBE}.order_id = {orders}.order_id"
""",
        "",
    )
    (folder / "refunds.yml").write_text(refunds)
    time.sleep(0.01)
    changed = export_assets(export_url, load_model(folder), embedder=EMB)
    assert changed.inserted == 1 and changed.deleted == 2 and changed.updated == 1
    assert set(changed.changed_ids) == {"dimension:orders.channel", "dimension:products.brand_upper"}
    assert changed.embedded == 2 and changed.edges_deleted == 1
    assert not _rows(
        export_url,
        "SELECT 1 FROM semlayer.asset WHERE asset_id IN ('metric:orders.pending_count', 'join:refunds->orders')",
    )
    assert not _rows(export_url, "SELECT 1 FROM semlayer.join_edge WHERE edge_id = 'refunds->orders'")
    assert _rows(export_url, "SELECT asset_type FROM semlayer.asset WHERE asset_id = 'term:gmv'") == [("term",)]


def test_ingest_files_validates_before_writing(export_url: str, tmp_path: Path) -> None:
    folder = tmp_path / "models"
    shutil.copytree(REPO_ROOT / "demo" / "model", folder)
    settings = Settings(_env_file=None, model_dir=folder)
    bad = [
        {
            "name": "extra.yml",
            "content": "cubes:\n  - name: extra\n    sql_table: warehouse.x\n"
            '    measures:\n      - {name: m, type: sum, sql: "{nope}"}\n',
        }
    ]
    with pytest.raises(Exception, match="nope"):
        ingest_files(export_url, bad, settings=settings, embedder=EMB)
    assert not (folder / "extra.yml").exists()
    good = [
        {
            "name": "extra.yml",
            "content": "cubes:\n  - name: extra\n    sql_table: warehouse.dim_region\n"
            "    dimensions:\n      - {name: region_id, sql: region_id, "
            "type: number, primary_key: true}\n"
            "    measures:\n      - {name: n, type: count}\n",
        }
    ]
    counts = ingest_files(export_url, good, settings=settings, embedder=EMB)
    assert (folder / "extra.yml").exists() and counts["cubes"] == 9
    assert _rows(export_url, "SELECT 1 FROM semlayer.asset WHERE asset_id = 'metric:extra.n'")
