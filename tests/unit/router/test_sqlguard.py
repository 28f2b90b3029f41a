"""The SQL guard: one bounded read-only SELECT over semantic-asset tables, nothing else."""

from __future__ import annotations

import pytest

from router.sqlguard import GuardPolicy, SqlGuardError, guard_sql

POLICY = GuardPolicy(frozenset({"warehouse.fact_order", "warehouse.dim_customer"}), max_limit=500, default_limit=50)


def test_plain_select_gets_default_limit_and_schema() -> None:
    guarded = guard_sql("select order_id from fact_order", POLICY)
    assert guarded.sql == "SELECT order_id FROM warehouse.fact_order LIMIT 50"
    assert guarded.tables == ("warehouse.fact_order",)
    assert guarded.limit == 50


def test_limit_is_capped() -> None:
    guarded = guard_sql("select * from warehouse.fact_order limit 100000", POLICY)
    assert guarded.limit == 500
    assert guarded.sql.endswith("LIMIT 500")


def test_join_and_read_only_cte_pass() -> None:
    guarded = guard_sql(
        "with c as (select customer_id from warehouse.dim_customer) "
        "select o.order_id from warehouse.fact_order o join c on c.customer_id = o.customer_id limit 5",
        POLICY,
    )
    assert guarded.tables == ("warehouse.dim_customer", "warehouse.fact_order")
    assert guarded.limit == 5


@pytest.mark.parametrize(
    ("sql", "rule"),
    [
        ("select 1; drop table warehouse.fact_order", "single_statement"),
        ("drop table warehouse.fact_order", "select_only"),
        ("update warehouse.fact_order set status = 'x'", "select_only"),
        ("copy warehouse.fact_order to '/tmp/x'", "select_only"),
        ("select * into warehouse.t2 from warehouse.fact_order", "select_only"),
        ("select * from warehouse.fact_order for update", "select_only"),
        ("with d as (delete from warehouse.fact_order returning *) select * from d", "no_writes"),
        ("select * from warehouse.fact_refund", "allowed_tables"),
        ("select * from pg_catalog.pg_user", "allowed_tables"),
        ("select * from otherdb.warehouse.fact_order", "allowed_tables"),
        ("select * from dblink('host=x', 'select 1') as t(a int)", "allowed_tables"),
        ("select pg_sleep(10)", "denied_functions"),
        ("select order_id, pg_catalog.pg_read_file('/etc/passwd') from warehouse.fact_order", "denied_functions"),
        ("select pg_ls_dir('.')", "denied_functions"),
        ("select lo_import('/etc/passwd')", "denied_functions"),
        ("select lo_export(1, '/tmp/x')", "denied_functions"),
        ("select set_config('role', 'postgres', false)", "denied_functions"),
        ("select current_setting('data_directory')", "denied_functions"),
        ("select * from warehouse.fact_order limit %(n)s", "limit"),
        ("", "parse"),
        ("select from where (", "parse"),
    ],
)
def test_refused(sql: str, rule: str) -> None:
    with pytest.raises(SqlGuardError) as info:
        guard_sql(sql, POLICY)
    assert info.value.rule == rule


def test_no_assets_means_no_tables() -> None:
    with pytest.raises(SqlGuardError, match="no semantic assets"):
        guard_sql("select 1 from warehouse.fact_order", GuardPolicy(frozenset()))


def test_the_allow_list_never_leaves_the_configured_schemas() -> None:
    # a policy whose table list was widened (e.g. by a model) still refuses tables outside its schemas
    widened = GuardPolicy(frozenset({"warehouse.fact_order", "semlayer.api_key", "pg_catalog.pg_roles"}))
    for sql in (
        "SELECT * FROM semlayer.api_key",
        "SELECT rolname FROM pg_catalog.pg_roles",
        "SELECT * FROM warehouse.fact_order o JOIN semlayer.api_key k ON true",
    ):
        with pytest.raises(SqlGuardError, match="outside the warehouse schemas"):
            guard_sql(sql, widened)
    assert guard_sql("SELECT * FROM warehouse.fact_order", widened).tables == ("warehouse.fact_order",)
    two = GuardPolicy(
        frozenset({"sales.orders", "finance.ledger"}),
        default_schema="sales",
        allowed_schemas=frozenset({"sales", "finance"}),
    )
    assert guard_sql("SELECT * FROM orders JOIN finance.ledger l ON true", two).tables == (
        "finance.ledger",
        "sales.orders",
    )
    with pytest.raises(SqlGuardError, match="outside"):
        guard_sql("SELECT * FROM warehouse.fact_order", two)
    with pytest.raises(SqlGuardError):  # unqualified system catalog names are pinned to the default schema
        guard_sql("SELECT * FROM pg_roles", two)
