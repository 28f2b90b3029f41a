"""``Cubesage``: the facade the CLI and the API call — ask a question, get an answer payload.

Holds the settings, the database URL and a small checked connection pool (``cubesage_core.db.pool``), the
loaded components (model,
retriever, SAG recall, entity directory, guard policy) and writes every answer to
``semlayer.query_log``. Startup cost (embedder warm-up, model load) is paid once in the constructor.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from dataclasses import asdict, dataclass, field
from datetime import date
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from answer import suggest
from answer.charts import chart_spec
from answer.passages import passages
from answer.scope import Scope, model_scope
from answer.synthesizer import Synthesis, synthesize
from answer.tables import view
from answer.trend import Trend, trend_of, trend_query
from answer.vocabulary import vocabulary
from answer.wiring import load_components
from cube_models.backends.base import LoadResult
from cubesage_core import db
from cubesage_core.blas import limit_blas_threads
from cubesage_core.embeddings import get_embedder
from cubesage_core.llm import question_budget, using_settings
from cubesage_core.settings import ConfigError, Settings, get_settings
from router.aggregate.derive import merge_groups
from router.components import Components
from router.detail import DetailEnv, EntityDirectory
from router.detail.catalog import table_catalog
from router.detail.schema import catalog_for
from router.pipeline import Pipeline, PipelineResult, StageCallback, Turn
from router.sqlguard.assets import policy_from_assets
from router.tables import table_from_rows
from router.understanding.language import check_question
from router.understanding.types import QuestionError
from router.write_requests import write_request

__all__ = ["AnswerPayload", "Cubesage", "QuestionError"]

MODES = ("fast", "llm")
log = logging.getLogger(__name__)


@dataclass
class AnswerPayload:
    query_id: str
    question: str
    intent: str
    text: str
    table: dict[str, Any]
    chart: dict[str, Any] | None
    provenance: dict[str, Any]
    timings_ms: dict[str, float]
    turn: dict[str, Any] | None = field(default=None)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Cubesage:
    """One process-wide answering service."""

    streams_stages = True  # ask() reports each stage through on_stage (answer.api._service)

    def __init__(
        self, settings: Settings | None = None, *, url: str | None = None, components: Components | None = None
    ) -> None:
        started = time.perf_counter()
        limit_blas_threads()
        self.settings = settings or get_settings()
        self.url = url or db.database_url(self.settings)
        self.pool = db.pool(self.url, min_size=1, max_size=8, name="cubesage-service")
        self.components = components or load_components(self.settings, self.url)
        self.detail_env = self._checked_detail_env()
        self.scope = self._scope()
        self.pipeline = Pipeline(self.components, self.detail_env)
        get_embedder(self.settings.embedding_backend).embed_one("warm up")  # pay the model load now
        self._warm_up()
        self.startup_ms = round((time.perf_counter() - started) * 1000, 1)

    def _checked_detail_env(self) -> DetailEnv:
        """``_detail_env``, or a ConfigError that says the model reads what the warehouse does not have."""
        try:
            return self._detail_env()
        except (psycopg.errors.UndefinedTable, psycopg.errors.UndefinedColumn) as err:
            first = str(err).splitlines()[0]
            raise ConfigError(
                f"the Cube model does not match the warehouse ({first}): model_dir ({self.settings.model_dir}) "
                f"and warehouse_schemas ({', '.join(self.settings.warehouse_schemas)}) must describe the same "
                "database; `cubesage config` shows both"
            ) from err

    def _detail_env(self) -> DetailEnv:
        """What the detail path knows of the warehouse: tables, joins and words from the Cube model
        (``catalog_for``), the names of its rows, the wiki titles of its tables and the SQL guard's policy
        (the physical tables of the published semantic assets)."""
        with self.pool.connection() as conn:
            warehouse = catalog_for(self.settings, conn, self.components.value_index())
            directory = EntityDirectory.load(conn, warehouse, pool=self.pool)
            catalog = table_catalog(conn)
            policy = policy_from_assets(
                conn,
                max_limit=min(self.settings.query_row_cap, 1000),
                default_limit=1000,
                default_schema=self.settings.warehouse_schema,
                schemas=self.settings.warehouse_schemas,
            )
        return DetailEnv(
            directory=directory,
            policy=policy,
            warehouse=warehouse,
            timeout_ms=self.settings.statement_timeout_ms,
            catalog=catalog,
        )

    def _scope(self) -> Scope:
        """What the warehouse holds, from the model (refusal and clarification texts)."""
        from cube_models.model import load_model

        with self.pool.connection() as conn:
            return model_scope(
                load_model(self.settings.model_folder()), conn, self.settings.warehouse_schema, names=vocabulary()
            )

    def _warm_up(self) -> None:
        """One unlogged question through every stage, so the first real question is not the slow one."""
        question = f"{self.scope.measures[0]} last month" if self.scope.measures else "How many rows last month?"
        try:
            self.pipeline.run(question, conn=self.pool, today=self.settings.today or date.today(), use_llm=False)
        except Exception as err:  # a missing demo index must not stop the service from starting
            log.warning("warm-up question failed: %s", err)

    def knowledge_changed(self, kind: str) -> None:
        """Use what an ingest just stored (``kind``: wiki | cube-models | glossary) without a restart:
        new Cube models are loaded, and the detail path re-reads its tables, words and guard policy."""
        self.components.refresh(kind)
        if kind == "cube-models":
            self.scope = self._scope()
        if kind in ("cube-models", "glossary", "wiki"):
            self.detail_env = self._detail_env()
            self.pipeline.detail_env = self.detail_env

    def ping(self) -> None:
        """A round trip through the answering path's own pool (what ``/readyz`` reports as the database)."""
        db.read(self.pool, lambda conn: conn.execute("SELECT 1").fetchone())

    def close(self) -> None:
        self.pipeline.close()
        self.components.close()
        self.pool.close()

    def __enter__(self) -> Cubesage:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- ask ----------------------------------------------------------------------------------------
    def ask(
        self,
        question: str,
        *,
        session_id: str | None = None,
        mode: str | None = None,
        today: date | None = None,
        previous: Any = None,
        on_stage: StageCallback | None = None,
    ) -> AnswerPayload:
        """Answer ``question``; raises :class:`QuestionError` for empty/overlong input or a bad mode."""
        text = check_question(question, max_chars=self.settings.api_max_question_chars)
        if mode is not None and mode not in MODES:
            raise QuestionError("bad_mode", f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        use_llm = None if mode is None else mode == "llm"
        today = today or self.settings.today or date.today()
        query_id = str(uuid.uuid4())
        started = time.perf_counter()
        with using_settings(self.settings), question_budget(self.settings, use_llm=use_llm) as budget:
            result = self.pipeline.run(
                text, conn=self.pool, today=today, use_llm=use_llm, previous=_turn(previous), on_stage=on_stage
            )
            t = time.perf_counter()
            trend = self._trend(result, today)
            synthesis = synthesize(result, use_llm=use_llm, scope=self.scope, trend=trend)
            synthesis.provenance["passages"] = self._passages(result)
        synthesis.provenance["llm"] = budget.report() if budget.steps else None
        result.timings_ms["answer"] = round((time.perf_counter() - t) * 1000, 3)
        result.timings_ms["total"] = round((time.perf_counter() - started) * 1000, 3)
        synthesis.provenance["timings_ms"] = dict(result.timings_ms)
        payload = _payload(query_id, question, result, synthesis)
        if on_stage is not None:
            on_stage("answer", payload.to_dict())
        with self.pool.connection() as conn:
            self._log(conn, payload, session_id)
        return payload

    def _trend(self, result: PipelineResult, today: date) -> Trend | None:
        """The trend behind a single-number aggregate answer (its KPI card's sparkline), or None."""
        agg = result.aggregate
        if result.intent.intent != "aggregate" or agg is None or agg.derived:
            return None
        return self._trend_of(agg.cube_query, agg.rows, today)

    def _trend_of(self, cube_query: dict[str, Any], rows: list[dict[str, Any]], today: date) -> Trend | None:
        if len(rows) != 1:
            return None
        model = self.components.model()
        query = trend_query(cube_query, model.time_dimension_for if model is not None else lambda _: None)
        if query is None:
            return None
        try:
            return trend_of(query, self._run(query.query, today).rows)
        except Exception as err:  # the card still shows the number; the sparkline is a bonus
            log.warning("trend query failed: %s", err)
            return None

    def _passages(self, result: PipelineResult) -> list[dict[str, str]]:
        tables = result.sag.get("tables") or []
        if not tables:
            return []
        with self.pool.connection() as conn:
            return passages(conn, tables)

    def _run(self, cube_query: dict[str, Any], today: date) -> LoadResult:
        """A Cube query on the current backend (components without one cannot run stored queries)."""
        result = self.components.load(cube_query, today)
        if result is None:
            raise RuntimeError("these components cannot run stored Cube queries")
        return result

    def _log(self, conn: Any, payload: AnswerPayload, session_id: str | None = None) -> None:
        prov = payload.provenance
        sql = prov.get("sql")
        plan = {
            k: prov.get(k)
            for k in (
                "cube_query",
                "detail_plan",
                "sub_queries",
                "bindings",
                "crag_grade",
                "tables",
                "backend",
                "fallback_reason",
            )
        }
        answer = {
            "text": payload.text,
            "row_count": len(payload.table["rows"]),
            "columns": payload.table["columns"],
            "error": prov.get("error"),
        }
        conn.execute(
            "INSERT INTO semlayer.query_log (query_id, session_id, question, intent, plan, timings, executed_sql,"
            " answer) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            (
                payload.query_id,
                session_id,
                payload.question,
                payload.intent,
                Jsonb(_jsonable(plan)),
                Jsonb(payload.timings_ms),
                "\n;\n".join(sql) if sql else None,
                Jsonb(_jsonable(answer)),
            ),
        )

    # -- nl2cube ------------------------------------------------------------------------------------
    def nl2cube(self, question: str, run: bool = False, today: date | None = None) -> dict[str, Any]:
        """The Cube query for an aggregate question (and its rows when ``run``); a request to change data is a
        :class:`QuestionError`."""
        text = check_question(question, max_chars=self.settings.api_max_question_chars)
        if (change := write_request(text)) is not None:
            raise QuestionError("write_request", change.message("en"))
        today = today or self.settings.today or date.today()
        c = self.components
        with using_settings(self.settings), question_budget(self.settings):
            understanding = c.understand(text, today)
            retrieval, _ = c.retrieve(understanding, [])
            agg = c.aggregate(understanding, retrieval, today, None)
        main = retrieval.get("result")
        out: dict[str, Any] = {
            "cube_query": agg.cube_query,
            "bindings": [b.to_dict() for b in getattr(main, "term_bindings", [])],
            "confidence": _confidence(agg, main),
            "problems": list(getattr(agg, "problems", []) or []),
        }
        if len(agg.cube_queries) > 1:
            out["cube_queries"] = [
                {"label": label, "cube_query": query} for label, query in zip(agg.labels, agg.cube_queries, strict=True)
            ]
        if run:
            out["rows"] = _jsonable(agg.rows)
        return out

    # -- stored queries and suggestions ------------------------------------------------------------
    def load(
        self,
        queries: list[tuple[str, dict[str, Any]]],
        *,
        today: date | None = None,
        language: str = "en",
        title: str = "",
    ) -> dict[str, Any]:
        """Run stored Cube queries again (a dashboard tile) through the current backend, without a question:
        their table and chart as an answer shows them. ``queries`` are (label, Cube query) as nl2cube
        returns them: queries of one label (measure groups) are merged on their dimensions, several labels
        (compared periods) are stacked with a ``period`` column."""
        today = today or self.settings.today or date.today()
        with using_settings(self.settings):
            loads = [(label, query, self._run(query, today)) for label, query in queries]
            rows = stack_loads(loads)
            table = table_from_rows(rows)
            several = len({label for label, _, _ in loads}) > 1
            trend = self._trend_of(queries[0][1], rows, today) if len(queries) == 1 else None
            return _jsonable(
                {
                    "table": view(table, language),
                    "chart": chart_spec(
                        table, language, title=title, trend=trend, periods=_earlier_first(queries) if several else None
                    ),
                    "sql": [load.sql for _, _, load in loads],
                    "backend": loads[0][2].backend,
                    "fallback_reason": loads[0][2].fallback_reason,
                    "today": today.isoformat(),
                }
            )

    def suggestions(self, language: str = "en") -> dict[str, Any]:
        """Questions built from the model, and what relative dates resolve against."""
        with using_settings(self.settings):
            questions = suggest.suggestions(
                self.components.model(), vocabulary(), self.components.value_index(), language
            )
        today = self.settings.today or date.today()
        return {
            "questions": questions,
            "today": today.isoformat(),
            "period": list(self.scope.period) if self.scope.period else None,
        }


def stack_loads(loads: list[tuple[str, dict[str, Any], Any]]) -> list[dict[str, Any]]:
    """Rows of (label, query, LoadResult): merged per label on dimensions (``merge_groups``), then stacked
    with a ``period`` column when there are several labels."""
    by_label: dict[str, list[tuple[dict[str, Any], list[dict[str, Any]]]]] = {}
    for label, query, load in loads:
        by_label.setdefault(label, []).append((query, load.rows))
    merged = {
        label: (merge_groups([q for q, _ in parts], [r for _, r in parts]) if len(parts) > 1 else parts[0][1])
        for label, parts in by_label.items()
    }
    if len(merged) == 1:
        return next(iter(merged.values()))
    return [{"period": label, **row} for label, rows in merged.items() for row in rows]


def _earlier_first(queries: list[tuple[str, dict[str, Any]]]) -> list[str]:
    def start(query: dict[str, Any]) -> str:
        span = (query.get("timeDimensions") or [{}])[0].get("dateRange") or [""]
        return str(span[0] if isinstance(span, list) else span)

    firsts: dict[str, str] = {}
    for label, query in queries:
        firsts.setdefault(label, start(query))
    return sorted(firsts, key=lambda label: firsts[label])


def _confidence(agg: Any, retrieval: Any) -> float:
    grade = getattr(getattr(retrieval, "crag", None), "grade", "low")
    base = {"high": 0.9, "medium": 0.7}.get(grade, 0.4)
    if getattr(agg, "problems", None):
        base -= 0.3
    if getattr(agg, "retries", 0):
        base -= 0.1
    return round(max(base, 0.0), 2)


def _turn(previous: Any) -> Turn | None:
    if previous is None or isinstance(previous, Turn):
        return previous
    turn = (
        previous.turn
        if isinstance(previous, AnswerPayload)
        else (previous.get("turn") if isinstance(previous, dict) else None)
    )
    if isinstance(turn, dict) and turn.get("question"):
        return Turn(
            question=turn["question"],
            intent=turn.get("intent", ""),
            cube_query=turn.get("cube_query"),
            entities=list(turn.get("entities") or []),
        )
    return None


def _payload(query_id: str, question: str, result: PipelineResult, synthesis: Synthesis) -> AnswerPayload:
    return AnswerPayload(
        query_id=query_id,
        question=question,
        intent=result.intent.intent,
        text=synthesis.text,
        table=synthesis.table,
        chart=synthesis.chart,
        provenance=_jsonable(synthesis.provenance),
        timings_ms=dict(result.timings_ms),
        turn=result.turn.to_dict() if result.turn else None,
    )


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str, ensure_ascii=False))
