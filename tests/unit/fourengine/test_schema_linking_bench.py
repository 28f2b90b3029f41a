"""Pieces of the schema-linking benchmark: data loading (Spider and BIRD keys), gold tables, BM25, RRF, metrics."""

import json
from pathlib import Path

import pytest

from bench.schema_linking import BM25, BenchDataError, gold_tables, load_set, metrics, rrf

TABLES = [
    {
        "db_id": "shop",
        "table_names_original": ["Customer", "Orders"],
        "table_names": ["customer", "orders"],
        "column_names_original": [
            [-1, "*"],
            [0, "Cust_ID"],
            [0, "Name"],
            [1, "Order_ID"],
            [1, "Cust_ID"],
            [1, "Total"],
        ],
        "column_names": [[-1, "*"], [0, "cust id"], [0, "name"], [1, "order id"], [1, "cust id"], [1, "total"]],
        "column_types": ["text", "number", "text", "number", "number", "number"],
        "foreign_keys": [[4, 1]],
        "primary_keys": [1, 3],
    }
]


def _write(tmp_path: Path, questions: list[dict], name: str = "dev.json") -> Path:
    (tmp_path / "tables.json").write_text(json.dumps(TABLES))
    (tmp_path / name).write_text(json.dumps(questions))
    return tmp_path


def test_gold_tables_come_from_the_sql_and_exist_in_the_schema() -> None:
    sql = "SELECT T1.name FROM customer AS T1 JOIN orders AS T2 ON T1.cust_id = T2.cust_id WHERE T2.total > 1"
    assert gold_tables(sql, {"customer", "orders"}) == {"customer", "orders"}
    assert gold_tables("SELECT * FROM ghost", {"customer"}) == set()
    assert gold_tables("NOT SQL AT ALL (((", {"customer"}) == set()


def test_load_set_accepts_bird_style_sql_key_and_counts_skips(tmp_path: Path) -> None:
    folder = _write(
        tmp_path,
        [
            {"question": "Names of customers", "db_id": "shop", "SQL": "SELECT Name FROM Customer"},
            {"question": "broken", "db_id": "shop", "SQL": "SELECT x FROM nowhere"},
        ],
        name="questions.json",
    )
    schemas, questions, skipped = load_set(folder)
    assert [q.gold for q in questions] == [{"shop.customer"}] and skipped == 1
    orders = schemas["shop"][1]
    assert orders.fks == [("shop.orders", "Cust_ID", "shop.customer", "Cust_ID")] and orders.pk == "Order_ID"
    assert orders.document == "Orders orders: order id, cust id, total"


def test_missing_files_are_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(BenchDataError):
        load_set(tmp_path)
    (tmp_path / "tables.json").write_text("[]")
    with pytest.raises(BenchDataError):
        load_set(tmp_path)


def test_bm25_ranks_the_matching_document_first() -> None:
    bm = BM25(["singer: name, country", "stadium: capacity, location", "concert: theme, year"])
    scores = bm.scores("Which stadiums have the largest capacity?", [0, 1, 2])
    assert scores.argmax() == 1 and scores[0] == 0


def test_rrf_and_metrics() -> None:
    assert rrf([["a", "b", "c"], ["b", "a", "d"]])[:2] in (["a", "b"], ["b", "a"])
    m = metrics([["a", "x", "b"], ["y", "z"]], [{"a", "b"}, {"q"}])
    assert m["R@1"] == 0.25 and m["R@3"] == 0.5 and m["All@5"] == 0.5


def test_lines_per_split() -> None:
    from bench.schema_linking import split_lines
    from bench.splits import split_indices

    golds = [{f"db.t{i}"} for i in range(6)]
    rankings = [[f"db.t{i}"] for i in range(6)]
    lines = split_lines("set", "union", "bm25", rankings, golds, [1.0] * 6)
    assert [x["split"] for x in lines] == ["dev", "test"] and [x["n"] for x in lines] == [3, 3]
    assert all(x["R@1"] == 1.0 for x in lines)
    assert len(split_indices(6)["dev"]) == 3
