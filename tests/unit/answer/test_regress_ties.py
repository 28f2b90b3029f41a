"""Nested ORDER BY ... LIMIT in gold SQL: one variant per tie-consistent choice, none without a tie."""

from __future__ import annotations

from typing import Any

import sqlglot
from sqlglot import exp

from answer.regress_compare import Gold
from answer.regress_ties import nested_cuts, tie_choices, variants

DETAIL = (
    "SELECT o.order_id FROM f o WHERE o.customer_id = (SELECT o2.customer_id FROM f o2 GROUP BY o2.customer_id"
    " ORDER BY COUNT(DISTINCT o2.order_id) DESC LIMIT 1) AND o.order_ts >= '2024-01-01'"
)


def runner(rows: list[list[Any]]) -> Any:
    seen: list[str] = []

    def run(sql: str) -> list[list[Any]]:
        seen.append(sql)
        return rows

    run.seen = seen  # type: ignore[attr-defined]
    return run


def test_a_tied_nested_cut_gives_one_variant_per_tied_row_and_one_with_all() -> None:
    run = runner([[7, 13], [9, 13]])  # customer_id, its order count (WITH TIES: both)
    out = variants(DETAIL, run)
    assert "WITH TIES" in run.seen[0] and "LIMIT" not in run.seen[0]
    assert len(out) == 3
    values = [sorted(v.this for v in sqlglot.parse_one(sql).find(exp.Values).find_all(exp.Literal)) for sql in out]
    assert values == [["7"], ["9"], ["7", "9"]]
    for sql in out:
        tree = sqlglot.parse_one(sql, read="postgres")
        assert tree.find(exp.Values).args["alias"].columns[0].name == "customer_id"
        assert "o.order_ts >= '2024-01-01'" in sql  # the rest of the gold unchanged
    assert "o.customer_id = (SELECT" in out[0] and "o.customer_id IN (SELECT" in out[2]  # all tied: a set


def test_no_tie_at_the_nested_cut_leaves_the_gold_as_it_is() -> None:
    assert variants(DETAIL, runner([[7, 13]])) == [DETAIL]
    assert variants("SELECT a FROM t ORDER BY a LIMIT 1", runner([[1], [1]])) == [
        "SELECT a FROM t ORDER BY a LIMIT 1"
    ]  # the outermost LIMIT is regress_compare's


def test_correlated_subqueries_and_offsets_are_no_cuts_run_alone() -> None:
    correlated = "SELECT o.id FROM o WHERE o.id = (SELECT x.id FROM x WHERE x.o = o.id ORDER BY x.t LIMIT 1)"
    assert nested_cuts(sqlglot.parse_one(correlated)) == []
    offset = "SELECT o.id FROM o WHERE o.id IN (SELECT x.id FROM x ORDER BY x.t LIMIT 1 OFFSET 1)"
    assert nested_cuts(sqlglot.parse_one(offset)) == []
    cte = "WITH top AS (SELECT id FROM x ORDER BY n DESC LIMIT 2) SELECT o.id FROM o JOIN top ON top.id = o.id"
    assert len(nested_cuts(sqlglot.parse_one(cte))) == 1


def test_tie_choices_keep_the_rows_above_the_cut() -> None:
    gold = Gold([["a"], ["b"], ["c"], ["d"]], [(3,), (2,), (2,), (2,)], limit=2)
    assert tie_choices(gold) == [[["a"], ["b"]], [["a"], ["c"]], [["a"], ["d"]], gold.rows]
    assert tie_choices(Gold([["a"], ["b"]], [(3,), (2,)], limit=2)) == []
