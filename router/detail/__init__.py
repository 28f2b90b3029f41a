"""Detail path: recalled tables and entity rows -> a guarded SELECT -> rows (read-only, bound values).

``run_detail`` plans the query by templates (fast) or a DSPy program (LLM mode, falling back to the
templates), checks it with the SQL guard and runs it read-only under the reader role.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any

import psycopg

from cubesage_core.llm import ModeResult, two_mode
from router.detail.build import build_select
from router.detail.entities import EntityDirectory, EntityMatch
from router.detail.llm import llm_detail_sql
from router.detail.plan import DetailPlan, DetailPlanError, plan_detail
from router.detail.schema import DetailCatalog
from router.sqlguard import GuardPolicy, SqlGuardError, guard_sql
from router.sqlguard.execute import QueryExecutionError, QueryRows, run_readonly

__all__ = [
    "DetailCatalog",
    "DetailEnv",
    "DetailPlan",
    "DetailPlanError",
    "DetailResult",
    "EntityDirectory",
    "EntityMatch",
    "QueryExecutionError",
    "SqlGuardError",
    "run_detail",
]


@dataclass
class DetailEnv:
    """What the detail path needs, built once per process."""

    directory: EntityDirectory
    policy: GuardPolicy
    warehouse: DetailCatalog = field(default_factory=DetailCatalog)  # tables, joins, words (from the model)
    timeout_ms: int = 5000
    mixed_limit: int = 5000  # rows a mixed question's detail part fetches in all (its counts per entity are
    # counted in SQL, router.detail.counts; a cut at this limit is stated, router.cuts)
    catalog: dict[str, tuple[str, str]] = field(default_factory=dict)  # table -> (title, description)

    def for_mixed(self) -> DetailEnv:
        return replace(self, policy=replace(self.policy, max_limit=max(self.mixed_limit, self.policy.max_limit)))


@dataclass
class DetailResult:
    plan: dict[str, Any]
    columns: list[str]
    rows: list[list[Any]]
    sql: str | None
    params: dict[str, Any]
    tables: list[str]
    entities: list[EntityMatch]
    mode: str = "fast"
    fallback_reason: str | None = None
    problems: list[str] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    total: int | None = None  # rows without the LIMIT, once counted (router.detail.counts)


def run_detail(
    question: str,
    *,
    conn: psycopg.Connection,
    env: DetailEnv,
    language: str,
    entities: list[EntityMatch],
    recalled_tables: list[tuple[str, str, float]],
    time_range: tuple[date, date] | None = None,
    limit: int | None = None,
    use_llm: bool | None = None,
) -> DetailResult:
    """Answer a detail question with rows. ``recalled_tables`` are (table, title, score), best first."""
    t0 = time.perf_counter()
    tables = [t for t, _, _ in recalled_tables]
    plan = plan_detail(
        question,
        language=language,
        entities=entities,
        time_range=time_range,
        limit=limit,
        recalled_tables=tables,
        catalog=env.warehouse,
        default_limit=env.policy.default_limit,
    )
    if plan.kind == "table_lookup":
        return _table_lookup(plan, env, entities, recalled_tables, t0)

    t1 = time.perf_counter()
    generated, ran = _generate_sql(question, plan, conn, env, tables, use_llm)
    sql, params = generated.value
    t2 = time.perf_counter()
    guarded = guard_sql(sql, env.policy)
    result = ran.get(sql) if generated.mode == "llm" else None
    result = result or run_readonly(conn, guarded, params, timeout_ms=env.timeout_ms)
    return DetailResult(
        plan=plan.to_dict(),
        columns=result.columns,
        rows=result.rows,
        sql=guarded.sql,
        params=params,
        tables=[t.rsplit(".", 1)[-1] for t in guarded.tables],
        entities=entities,
        mode=generated.mode,
        fallback_reason=generated.fallback_reason,
        timings_ms={"plan": _ms(t0, t1), "sql": _ms(t1, t2), "rows": _ms(t2)},
    )


def _generate_sql(
    question: str, plan: DetailPlan, conn: psycopg.Connection, env: DetailEnv, tables: list[str], use_llm: bool | None
) -> tuple[ModeResult[tuple[str, dict[str, Any]]], dict[str, QueryRows]]:
    """The plan's SELECT and its bound values, by the LLM or the templates, with the rows of each SQL the
    warehouse ran while the LLM's SQL was checked."""

    def fast() -> tuple[str, dict[str, Any]]:
        return build_select(plan, env.warehouse)

    ran: dict[str, QueryRows] = {}  # the LLM's SQL the warehouse ran while it was checked

    def probe(sql: str, params: dict[str, Any]) -> None:
        ran[sql] = run_readonly(conn, guard_sql(sql, env.policy), params, timeout_ms=env.timeout_ms)

    generated = two_mode(
        lambda: llm_detail_sql(question, plan, env.warehouse, env.policy, tables, probe),
        fast,
        step="detail_sql",
        use_llm=use_llm,
    )
    return generated, ran


def _table_lookup(
    plan: DetailPlan,
    env: DetailEnv,
    entities: list[EntityMatch],
    recalled_tables: list[tuple[str, str, float]],
    t0: float,
) -> DetailResult:
    """ "which table holds ...": the recalled tables, the one the question names first, with their titles."""
    ranked = sorted(recalled_tables, key=lambda hit: hit[0] != plan.target)  # the named table first
    rows = [[t, *env.catalog.get(t, ("", "")), evidence, round(score, 4)] for t, evidence, score in ranked]
    return DetailResult(
        plan.to_dict(),
        ["table", "title", "description", "evidence", "score"],
        rows,
        None,
        {},
        [t for t, _, _ in ranked],
        entities,
        timings_ms={"plan": _ms(t0)},
    )


def _ms(start: float, end: float | None = None) -> float:
    return round(((end or time.perf_counter()) - start) * 1000, 3)
