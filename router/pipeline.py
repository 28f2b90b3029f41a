"""The question path: understand -> decompose -> retrieve (+ SAG recall, RRF-fused) -> intent -> path(s).

``Pipeline.run`` returns a :class:`PipelineResult` with everything the synthesizer and the query log
need, per-stage timings, and a :class:`Turn` the caller keeps for follow-up questions
("and by channel?", "只看德国"). ``on_stage(name, payload)`` is called as stages finish
(intent, retrieval, plan, rows) so an API can stream them.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass, field, is_dataclass, replace
from datetime import date
from typing import TYPE_CHECKING, Any, cast

from psycopg_pool import ConnectionPool

from cube_models.errors import CubeModelsError
from cubesage_core.llm import in_context, run_concurrently, wants_llm
from cubesage_core.settings import get_settings
from fourengine.models import RetrievalResult
from router.aggregate import AggregateError, OutOfModelError
from router.aggregate.follow_up import FollowUp
from router.aggregate.ties import Tie, find_tie
from router.behind import BEHIND_EXTREME, MIXED_ENTITIES, behind_aggregate, extreme_only
from router.components import Components
from router.cuts import CUBE_DETAIL_KINDS, Cut, PathCounter, find_cuts
from router.detail import (
    DetailEnv,
    DetailPlanError,
    DetailResult,
    EntityMatch,
    QueryExecutionError,
    SqlGuardError,
    run_detail,
)
from router.detail.context import DetailContext, detail_context
from router.detail.counts import count_groups, count_rows
from router.detail.entities import from_row_hits, merge
from router.detail.vocabulary import TABLE_LOOKUP
from router.intent import ranked_tables, rows_clause, without_join
from router.intent.types import IntentDecision
from router.mixed import MixedResult, join_columns, join_keys, join_results
from router.parse.verdict import judge
from router.tables import ResultTable, table_from_rows
from router.write_requests import WriteRequest, write_request

if TYPE_CHECKING:
    from router.aggregate.types import AggregateResult
    from router.decompose import SubQuery
    from router.intent.types import Intent
    from router.parse.reading import Reading
    from router.understanding.types import TimeRange, Understanding
    from sag_index.recall import RowHit, TableHit

StageCallback = Callable[[str, dict[str, Any]], None]
PATH_ERRORS = (AggregateError, DetailPlanError, SqlGuardError, QueryExecutionError, LookupError)

FOLLOW_UP = re.compile(
    r"^\s*(and|also|what about|how about|only|just|same|now)\b|\bonly\s*[?？.!]*\s*$"
    r"|^\s*(那|再|只看|只要|仅看|换成|按.{1,6}呢)|呢\s*[?？]?\s*$",
    re.IGNORECASE,
)


@dataclass
class Turn:
    """What a follow-up question may reuse from the previous turn."""

    question: str
    intent: str
    cube_query: dict[str, Any] | None = None
    entities: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "intent": self.intent,
            "cube_query": self.cube_query,
            "entities": self.entities,
        }


@dataclass
class PipelineResult:
    question: str
    understanding: Understanding
    intent: IntentDecision
    sub_queries: list[dict[str, Any]]
    retrieval: dict[str, Any]
    sag: dict[str, Any]
    table: ResultTable
    aggregate: AggregateResult | None = None
    detail: DetailResult | None = None
    mixed: MixedResult | None = None
    follow_up_of: str | None = None
    error: dict[str, str] | None = None  # the path could not answer: {"type", "message"}
    problems: list[Any] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    turn: Turn | None = None
    cuts: list[Cut] = field(default_factory=list)  # limits the rows stopped at, counted (router.cuts)
    tie: Tie | None = None  # the aggregate's limit cuts between rows tied on its order (router.aggregate.ties)
    corrections: list[tuple[str, str]] = field(default_factory=list)  # typos, (as written, as read)


@dataclass
class _Recall:
    """What retrieval and SAG recall found for a question before its intent is decided."""

    retrieval: dict[str, Any]
    fused: list[dict[str, Any]]
    row_hits: list[RowHit]
    sag_down: BaseException | None  # the SAG store's error when it is unreachable
    entities: list[EntityMatch]
    lookup: bool  # a "which table ..." question: table recall ran before intent
    table_hits: list[TableHit]


class Pipeline:
    """One question in, one :class:`PipelineResult` out; built once per process over loaded components."""

    def __init__(self, components: Components, detail_env: DetailEnv) -> None:
        self.c = components
        self.detail_env = detail_env
        self._workers = ThreadPoolExecutor(max_workers=2, thread_name_prefix="cubesage-sag")

    def close(self) -> None:
        self._workers.shutdown(wait=True)

    def run(
        self,
        question: str,
        *,
        conn: Any,
        today: date,
        use_llm: bool | None = None,
        previous: Turn | None = None,
        on_stage: StageCallback | None = None,
    ) -> PipelineResult:
        emit = on_stage or (lambda name, payload: None)
        timings: dict[str, float] = {}
        clock = _Clock(timings)

        asked, follow_up_of = _with_context(question, previous)
        asked, corrections = self.c.spell(asked)
        understanding, sub_queries = self._understand(asked, today, use_llm)
        clock.lap("understand")
        if (change := write_request(question)) is not None:  # cubesage never changes data: refused as such
            return _refused_result(question, understanding, change, timings)

        recall = self._recall(understanding, sub_queries)
        clock.lap("retrieval")
        decision = self._decide(understanding, recall, use_llm)
        clock.lap("intent")
        emit("intent", _intent_dict(decision))
        pending = self._start_table_recall(decision.intent, understanding, recall)
        sag = _recalled(recall, emit)

        result = PipelineResult(
            question=question,
            understanding=understanding,
            intent=decision,
            sub_queries=[_sub_dict(s) for s in sub_queries],
            retrieval={
                "fused": recall.fused,
                "result": recall.retrieval.get("result"),
                "context": recall.retrieval.get("context"),
            },
            sag=sag,
            table=ResultTable([]),
            follow_up_of=follow_up_of,
            timings_ms=timings,
            corrections=corrections,
        )
        follow_up = self._follow_up_of(question, previous, today, result)
        self._answer(result, conn, recall, today, use_llm, clock, emit, follow_up)
        return _finished(
            result, Turn(question=asked, intent=decision.intent, entities=sag["rows"]), sag, pending, emit, timings
        )

    def _recall(self, understanding: Understanding, sub_queries: list[SubQuery]) -> _Recall:
        """Retrieval, with SAG row recall (database lookups) running alongside it (and the LLM's CRAG grade);
        SAG table recall, the slow part, only for "which table ..." questions (before intent)."""
        rows_pending = self._workers.submit(in_context(_recall_rows), self.c, understanding.normalized)
        retrieval, fused = self.c.retrieve(understanding, sub_queries)
        row_hits, sag_down = rows_pending.result()
        entities = merge(
            self.detail_env.directory.match(understanding.normalized),
            from_row_hits(row_hits, understanding.normalized, tables=self.detail_env.warehouse.tables or None),
        )
        lookup = bool(TABLE_LOOKUP.search(understanding.normalized)) and sag_down is None
        table_hits = self.c.recall_tables(understanding.normalized, rows=row_hits) if lookup else []
        return _Recall(retrieval, fused, row_hits, sag_down, entities, lookup, table_hits)

    def _decide(self, understanding: Understanding, recall: _Recall, use_llm: bool | None) -> IntentDecision:
        """The intent decision: the classifier's, corrected by the parser's reading, the catalog and CRAG."""
        signals = self.c.signals(understanding, recall.retrieval, recall.entities, recall.table_hits[:1])
        reading = self.c.parse(understanding, recall.entities)
        if reading is not None:  # "part 2000": a key, no period for any path (or the answer's text) to apply
            understanding.time_ranges = [t for t in understanding.time_ranges if t.phrase not in reading.key_periods]
        decision = _with_reading(
            self.c.classify_intent(understanding, signals, use_llm=use_llm), reading, self.detail_env
        )
        if recall.lookup and recall.table_hits and decision.intent in ("clarify", "unsupported"):
            decision = _catalog_decision(decision, recall.table_hits[0])
        return _crag_gate(decision, recall.retrieval.get("result"))

    def _start_table_recall(
        self, intent: str, understanding: Understanding, recall: _Recall
    ) -> Future[list[TableHit]] | None:
        """Detail/mixed: SAG table recall (provenance, catalog) started to run while the path(s) run; raises
        the SAG store's error when it is unreachable (no fallback): detail questions cannot be answered."""
        if recall.sag_down is not None and intent in ("detail", "mixed"):
            raise recall.sag_down
        if intent in ("detail", "mixed") and not recall.lookup:
            return self._workers.submit(
                in_context(self.c.recall_tables), understanding.normalized, rows=recall.row_hits
            )
        return None

    def _follow_up_of(
        self, question: str, previous: Turn | None, today: date, result: PipelineResult
    ) -> FollowUp | None:
        """An aggregate follow-up of an aggregate turn edits the previous Cube query (and takes its period)."""
        if not (
            result.follow_up_of
            and result.intent.intent == "aggregate"
            and previous
            and previous.intent == "aggregate"
            and previous.cube_query
        ):
            return None
        follow_up = self._follow_up(question, previous, today)
        result.understanding.time_ranges = _follow_up_period(result.understanding, follow_up)
        return follow_up

    def _answer(
        self,
        result: PipelineResult,
        conn: Any,
        recall: _Recall,
        today: date,
        use_llm: bool | None,
        clock: _Clock,
        emit: StageCallback,
        follow_up: FollowUp | None,
    ) -> None:
        """The path(s) and the limits their rows stopped at; a path's refusal becomes the result's error."""
        decision = result.intent
        try:
            self._run_paths(result, conn, recall.retrieval, recall.entities, today, use_llm, clock, emit, follow_up)
            result.cuts = self._cuts(result, conn, today)
            clock.lap("cuts")
            result.tie = self._tie(result, conn, today)
        except PATH_ERRORS as err:
            result.error = {"type": type(err).__name__, "message": str(err)}
            result.table = ResultTable([])
            if isinstance(err, OutOfModelError) and decision.intent == "aggregate":
                result.intent = replace(decision, intent="unsupported", reasons=[*decision.reasons, str(err)])

    def _understand(self, asked: str, today: date, use_llm: bool | None) -> tuple[Understanding, list[SubQuery]]:
        """Understanding and decomposition; in LLM mode their LLM calls run at the same time (the decomposer
        reads the rule-based understanding, ready in milliseconds)."""
        if not wants_llm(use_llm):
            understanding = self.c.understand(asked, today, use_llm=use_llm)
            return understanding, self.c.decompose(understanding, use_llm=use_llm)
        rules = self.c.understand(asked, today, use_llm=False)
        understanding, sub_queries = run_concurrently(
            lambda: self.c.understand(asked, today, use_llm=use_llm), lambda: self.c.decompose(rules, use_llm=use_llm)
        )
        return understanding, sub_queries

    def _follow_up(self, question: str, previous: Turn, today: date) -> FollowUp:
        """The follow-up read on its own, to edit the previous Cube query with (fast mode)."""
        own = self.c.understand(question, today, use_llm=False)
        own_retrieval, _ = self.c.retrieve(own, [])
        return FollowUp(dict(previous.cube_query or {}), own, own_retrieval.get("result"))

    def _run_paths(
        self,
        result: PipelineResult,
        conn: Any,
        retrieval: dict[str, Any],
        entities: list[EntityMatch],
        today: date,
        use_llm: bool | None,
        clock: _Clock,
        emit: StageCallback,
        follow_up: FollowUp | None = None,
    ) -> None:
        """The aggregate and/or detail path by intent; mixed joins them."""
        understanding, sub_queries, intent = result.understanding, result.sub_queries, result.intent.intent
        recalled = [(h["table"], h["title"], h["score"]) for h in result.sag["tables"]]
        detail_context = _detail_context(recalled, retrieval.get("context"), self.detail_env)
        if intent in ("aggregate", "mixed"):
            agg_understanding, agg_retrieval = understanding, {**retrieval, "entities": entities}
            if intent == "mixed":
                agg_understanding, agg_retrieval = self._aggregate_part(
                    sub_queries, understanding, retrieval, today, use_llm
                )
                agg_retrieval["entities"] = _named_in(entities, agg_understanding.normalized)
            result.aggregate = self.c.aggregate(agg_understanding, agg_retrieval, today, use_llm, follow_up=follow_up)
            clock.lap("aggregate")
            emit("plan", {"cube_query": getattr(result.aggregate, "cube_query", None)})
            result.table = table_from_rows(result.aggregate.rows)
            result.problems += [_plain_problem(p) for p in getattr(result.aggregate, "problems", []) or []]
        if intent in ("detail", "mixed"):
            result.detail = self._drill(result, retrieval, today) if intent == "mixed" else None
            if result.detail is None:
                self._detail_path(result, conn, entities, detail_context, use_llm)
            clock.lap("detail")
            if result.detail is not None:
                emit("plan", {"sql": result.detail.sql, "plan": result.detail.plan})
                detail_table = ResultTable(result.detail.columns, result.detail.rows)
                if intent == "mixed":
                    joins = join_columns(self.detail_env.warehouse)
                    result.mixed = join_results(
                        result.table,
                        detail_table,
                        joins,
                        language=understanding.language,
                        covered_rows=MIXED_ENTITIES,
                        counts=self._entity_counts(result, conn, joins),
                    )
                    result.table = result.mixed.table
                else:
                    result.table = detail_table

    def _entity_counts(self, result: PipelineResult, conn: Any, joins: Any) -> list[tuple[Any, ...]] | None:
        """A mixed answer's detail rows per entity (and summary value), counted in SQL over its detail query
        without the LIMIT; None when the detail came from a Cube query or names no entity of the aggregate."""
        detail = result.detail
        if detail is None or not detail.sql or detail.plan.get("kind") in CUBE_DETAIL_KINDS:
            return None
        keys = join_keys(result.table, detail.columns, joins)
        if keys is None:
            return None
        _, det_col, summary = keys
        env = self.detail_env.for_mixed()
        try:
            with _connection(conn) as connection:
                counts = count_groups(
                    connection,
                    detail.sql,
                    detail.params,
                    [det_col, *([summary] if summary else [])],
                    env.policy,
                    timeout_ms=env.timeout_ms,
                )
        except (SqlGuardError, QueryExecutionError) as err:
            result.problems.append({"code": "detail_count_failed", "message": str(err)})
            return None
        if len(counts) < env.policy.max_limit:  # every group came back: their rows are all the rows
            detail.total = sum(int(group[-1]) for group in counts)
        return counts

    def _counter(self, result: PipelineResult, conn: Any, today: date) -> PathCounter:
        """Counts rows without a limit, over this answer's own paths (``router.cuts``)."""
        env = self.detail_env.for_mixed() if result.intent.intent == "mixed" else self.detail_env

        def count_sql(sql: str, params: dict[str, Any]) -> int:
            with _connection(conn) as connection:
                return count_rows(connection, sql, params, env.policy, timeout_ms=env.timeout_ms)

        return PathCounter(load=lambda query: self.c.load(query, today), count_sql=count_sql)

    def _cuts(self, result: PipelineResult, conn: Any, today: date) -> list[Cut]:
        """The limits this answer's rows stopped at, each with the rows there are (``router.cuts``)."""
        settings = get_settings()
        counter = self._counter(result, conn, today)
        return find_cuts(
            result.intent.intent,
            result.aggregate,
            result.detail,
            counter,
            covered=MIXED_ENTITIES,
            default_limit=min(settings.default_limit, settings.query_row_cap),
        )

    def _tie(self, result: PipelineResult, conn: Any, today: date) -> Tie | None:
        """A tie at the aggregate's limit (the row past it came with the rows), its tied rows counted."""
        agg = result.aggregate
        peek = getattr(agg, "peek", None)  # an aggregate of another path (a drill-down) has none
        if agg is None or peek is None or peek.past is None:
            return None
        return find_tie(agg.cube_query, agg.rows, peek, self._counter(result, conn, today).cube)

    def _detail_path(
        self,
        result: PipelineResult,
        conn: Any,
        entities: list[EntityMatch],
        context: DetailContext,
        use_llm: bool | None,
    ) -> None:
        """The detail path: the rows of a detail question, or those a mixed question's row clause asks for."""
        understanding, intent = result.understanding, result.intent.intent
        detail_question, detail_entities, limit = understanding.normalized, entities, _limit(understanding)
        env = self.detail_env
        if intent == "mixed":
            detail_question, detail_entities = self._detail_part(
                result.sub_queries, understanding, result.retrieval, result.table, entities
            )
            env = env.for_mixed()
            limit = env.policy.max_limit
        llm = wants_llm(use_llm)
        if not llm and self._listing(result, detail_question, detail_entities):
            return
        if (
            intent == "mixed"
            and not detail_entities
            and extreme_only(getattr(result.aggregate, "cube_query", None) or {}, self.c.model())
        ):
            result.problems.append({"code": "detail_failed", "message": BEHIND_EXTREME})  # not every row it spans
            return
        try:
            with _connection(conn) as connection:
                result.detail = run_detail(
                    detail_question,
                    conn=connection,
                    env=env,
                    language=understanding.language,
                    entities=detail_entities,
                    recalled_tables=context.recalled,
                    time_range=_time_range(understanding),
                    limit=limit,
                    use_llm=use_llm,
                )
            result.detail.plan["context"] = context.to_dict()  # the tables it planned with, and their source
        except (DetailPlanError, SqlGuardError, QueryExecutionError) as err:
            if llm and self._listing(result, detail_question, detail_entities):
                return  # LLM mode, the template planner refused: fast mode's listing answers
            if intent != "mixed":
                raise
            result.problems.append({"code": "detail_failed", "message": str(err)})  # keep the aggregate
            return
        if llm and result.detail.mode != "llm":  # the LLM did not write the SQL: the rows fast mode gives
            template, problems = result.detail, len(result.problems)
            listed = self._listing(result, detail_question, detail_entities)  # its refusal, as in fast mode
            if result.detail is template and listed:  # the listing refused the rows part: no guessed rows
                result.detail = None
            elif result.detail is template:  # no listing either: the template's rows stand
                del result.problems[problems:]

    def _listing(self, result: PipelineResult, question: str, entities: list[EntityMatch]) -> bool:
        """The rows of a detail (sub-)question the parser reads as a listing, through the semantic layer;
        False when it does not (the template planner answers); raises the reading's refusal."""
        understanding = result.understanding
        if question != understanding.normalized:
            understanding = self.c.understand(question, understanding.today, use_llm=False)
        reading = self.c.parse(understanding, entities)
        if reading is not None and (why := _rows_part_refused(result, question, reading, self.detail_env)):
            result.problems.append({"code": "detail_failed", "message": why})
            return True
        if (
            reading is None
            or reading.intent != "detail"
            or reading.listing is None  # a detail reading names it
            or _deferred(reading, self.detail_env)
        ):
            return False
        if result.intent.intent == "mixed":
            behind_aggregate(reading, result.table, getattr(result.aggregate, "cube_query", None) or {}, self.c.model())
        verdict = judge(reading)
        if not verdict.answers:
            if result.intent.intent == "mixed":
                result.problems.append({"code": "detail_failed", "message": verdict.refusal or "no listing"})
                return True
            raise DetailPlanError(verdict.refusal or "the question could not be read against the model")
        mixed = result.intent.intent == "mixed"
        if mixed and not understanding.time_ranges:  # "top 5 customers this year and their orders"
            understanding.time_ranges = list(result.understanding.time_ranges[:1])
        limit = self.detail_env.for_mixed().policy.max_limit if mixed else self.detail_env.policy.max_limit
        try:
            query, load = self.c.listing(reading, understanding, understanding.today, limit)
        except CubeModelsError as err:  # no join path the model declares ("suppliers" of a "part")
            if not mixed:
                raise DetailPlanError(str(err)) from err
            result.problems.append({"code": "detail_failed", "message": str(err)})
            return True
        columns = [*query["dimensions"], *query.get("measures", [])]  # the rows' own measures after their columns
        result.detail = DetailResult(
            plan={"kind": "listing", "target": reading.listing, "cube_query": query, "reading": reading.to_dict()},
            columns=columns,
            rows=[[row.get(c) for c in columns] for row in load.rows],
            sql=load.sql,
            params={},
            tables=[reading.listing],
            entities=entities,
        )
        return True

    def _drill(self, result: PipelineResult, retrieval: dict[str, Any], today: date) -> DetailResult | None:
        """A mixed question's rows as the drill-down of its aggregate (``router.aggregate.drill``), when the
        row clause names no other table than the measure's; None sends the question to the detail path."""
        agg = result.aggregate
        cube_query = getattr(agg, "cube_query", None)
        if agg is None or not cube_query or (cube_query.get("dimensions") and not agg.rows):
            return None
        if extreme_only(cube_query, self.c.model()):  # its rows are those holding the value (``behind``)
            return None
        words = _table_words(retrieval)
        clause = rows_clause(result.understanding.normalized, list(words))
        tail = clause[1].lower() if clause else ""
        named = [cube for word, cube in words.items() if word and word.lower() in tail]
        try:
            drilled = self.c.drill(cube_query, agg.rows, named, self.detail_env.policy.max_limit, MIXED_ENTITIES, today)
        except (CubeModelsError, LookupError) as err:
            result.problems.append({"code": "drill_failed", "message": str(err)})
            return None
        if drilled is None:
            return None
        query, load = drilled
        columns = list(query["dimensions"])
        return DetailResult(
            plan={"kind": "drill-down", "cube_query": query},
            columns=columns,
            rows=[[row.get(c) for c in columns] for row in load.rows],
            sql=load.sql,
            params={},
            tables=[columns[0].split(".", 1)[0]],
            entities=[],
        )

    def _aggregate_part(
        self,
        sub_queries: list[Any],
        understanding: Understanding,
        retrieval: dict[str, Any],
        today: date,
        use_llm: bool | None,
    ) -> tuple[Any, dict[str, Any]]:
        """The aggregate sub-question of a mixed question (re-read, keeping the whole question's period)."""
        part = next((s for s in sub_queries if _sub_dict(s).get("kind") == "aggregate"), None)
        last = _last_sentence_rows(understanding.normalized)
        if last or part is None or len(sub_queries) < 2:
            head = last or _aggregate_clause(
                understanding.normalized, _ranked_words(understanding.normalized, retrieval)
            )
            if not head:
                return understanding, dict(retrieval)
            part = {"text": head}
        head = _sub_dict(part)["text"]
        sub = _with_whole_question(self.c.understand(head, today, use_llm=False), understanding, head)
        done = retrieval.get("by_sub", {}).get(head)
        sub_retrieval = {"result": done} if done is not None else self.c.retrieve(sub, [])[0]
        return sub, sub_retrieval

    def _detail_part(
        self,
        sub_queries: list[Any],
        understanding: Understanding,
        retrieval: dict[str, Any],
        aggregate: ResultTable,
        entities: list[EntityMatch],
    ) -> tuple[str, list[EntityMatch]]:
        """The detail sub-question of a mixed question, with the entities the aggregate rows name."""
        texts = [_sub_dict(s)["text"] for s in sub_queries]
        detail_text = next(
            (t for t in texts if _sub_dict_intent(sub_queries, t) == "detail"),
            texts[-1]
            if len(texts) > 1
            else _rows_part(understanding.normalized, _ranked_words(understanding.normalized, retrieval)),
        )
        named = list(entities)
        for value in _first_text_column(aggregate)[:MIXED_ENTITIES]:
            named += self.detail_env.directory.match(str(value))
        return detail_text, merge(named, [])


def _with_whole_question(sub: Understanding, whole: Understanding, head: str) -> Understanding:
    """A mixed question's aggregate part takes the whole question's period and ranking when it says none,
    unless only the rows part says them ("..., and its 10 largest orders from January 2013": that ranking
    and that period are the rows')."""
    rows = whole.normalized.replace(head, "", 1)
    if not sub.time_ranges:
        sub.time_ranges = [t for t in whole.time_ranges if not (t.phrase and t.phrase in rows)]
    if (
        sub.ranking is None
        and whole.ranking is not None
        and not (whole.ranking.phrase and whole.ranking.phrase in rows)
    ):
        sub.ranking = whole.ranking
    return sub


_SENTENCE = re.compile(r"(?<=[?？!。；;])\s*|(?<=\.)(?!\d)\s*")  # "1.5万" is one number, no sentence end


def _last_sentence_rows(text: str) -> str:
    """The sentences before a last one that asks for the rows ("How many ..., and what did they add up to?
    List them."); "" when the last sentence is no such request."""
    sentences = [s for s in _SENTENCE.split(text) if s.strip()]
    if len(sentences) > 1 and rows_clause(" ? " + sentences[-1], []):
        return " ".join(sentences[:-1]).strip()
    return ""


def _rows_part(text: str, table_words: list[str]) -> str:
    """The detail part of a mixed question the decomposer did not split: its last sentence asking for rows,
    else its clause about rows ("..., and which customer placed it?", "..., and what were its 10 largest
    orders?": a clause naming a table the question binds), else the whole question."""
    if _last_sentence_rows(text):
        return [s for s in _SENTENCE.split(text) if s.strip()][-1].strip()
    clause = rows_clause(text, table_words)
    return without_join(clause[1]) if clause else text


def _aggregate_clause(text: str, table_words: list[str]) -> str:
    """The aggregate part of a mixed question: the text before the clause about rows."""
    clause = rows_clause(text, table_words)
    return text[: text.find(clause[1])].strip() if clause else ""


def _rows_part_refused(result: PipelineResult, question: str, reading: Reading, env: DetailEnv) -> str | None:
    """Why a mixed question's rows part is not listed, or None: words the model cannot place (the template
    planner would drop them), or a rows part that reads as a total."""
    if result.intent.intent == "mixed":
        _referring_back(reading)
    if result.intent.intent == "mixed" and (reading.unknown or reading.unhonoured) and not _deferred(reading, env):
        return judge(reading).refusal or "no listing"
    if _rows_part_is_a_total(result, question, reading, env):
        return f"the rows part reads as a total ({', '.join(reading.measures)}), not as rows the model lists"
    return None


# words of a rows part that point back at the aggregate's answer ("that day", "那天"): the rows listed are those
# behind it (router.behind), so they are honoured, not unknown
_BACK = re.compile(
    r"\b(?:that|this|the same)\s+(?:day|date|week|month|quarter|year)\b|"
    r"\b(?:behind|underlying|under)\s+(?:it|that|this|them|those|these|the)(?:\s+(?:number|total|figure|sum|amount)s?)?\b|"
    r"那一?天|当天|那个?月|当月|那一?年|当年|那个?季度|那一?周",
    re.IGNORECASE,
)


def _referring_back(reading: Reading) -> None:
    spans = [m.span() for m in _BACK.finditer(reading.text)]
    kept = [(a, b) for a, b in reading.unknown_spans if not any(s <= a and b <= e for s, e in spans)]
    if len(kept) < len(reading.unknown_spans):
        reading.unknown = list(dict.fromkeys(reading.text[a:b] for a, b in kept))
        reading.unknown_spans = kept


def _rows_part_is_a_total(result: PipelineResult, question: str, reading: Reading, env: DetailEnv) -> bool:
    """ "..., and which of its tracks sold that year?": a mixed question's rows part that the parser reads as a
    measure ("tracks sold") is not a listing; the template planner would list rows without its words."""
    return (
        result.intent.intent == "mixed"
        and question != result.understanding.normalized
        and reading.intent == "aggregate"
        and bool(reading.measures)
        and not _deferred(reading, env)
    )


def _deferred(reading: Reading, env: DetailEnv) -> bool:
    """The detail vocabulary (``detail_vocabulary``: table nouns and value words the model cannot say)
    knows better: every word the model does not know is one of its words, or its first table noun names
    another table than the listed one; and questions about the catalog ("which table ..."). The template
    planner, which reads the vocabulary, answers them."""
    catalog = env.warehouse
    if TABLE_LOOKUP.search(reading.text):
        return True
    if reading.intent == "detail" and reading.listing:
        table, at = next(
            ((t, m.start()) for t, pattern in catalog.nouns if (m := pattern.search(reading.text))), ("", 0)
        )
        spec = catalog.tables.get(table) if table else None
        inside = reading.listed is not None and reading.listed[0] <= at < reading.listed[1]  # 航班 of 航班号
        keyed = spec is not None and spec.cube in reading.keyed  # "what's in order 58129? products, qty"
        if spec is not None and spec.cube != reading.listing and not (inside or keyed or _named_before(reading, at)):
            return True
    if not reading.unknown_spans:
        return False
    patterns = [p for _, p in catalog.nouns] + [v.pattern for v in catalog.values]
    spans = [m.span() for p in patterns for m in p.finditer(reading.text)]
    return all(any(s <= a and b <= e for s, e in spans) for a, b in reading.unknown_spans)


def _unasked_rows(reading: Reading) -> bool:
    """A listing no word asks for: every row of a table, or rows a vague question only names a value of ("how
    are sales looking?": the rows of kind 'sale' answer nothing asked)."""
    return _every_row(reading) or (
        reading.intent == "detail"
        and not reading.marks_of("list", "which", "bound", "sign", "string_op", "string_in", "recent")
        and not (reading.keyed or reading.column_list or reading.order or reading.limit)
    )


def _every_row(reading: Reading) -> bool:
    """A listing bounded by nothing: no filter, period, order, limit, named row or list of columns."""
    return (
        reading.intent == "detail"
        and not (reading.filters or reading.time_spans or reading.order or reading.limit)
        and not (reading.keyed or reading.column_list or reading.segments)
    )


def _named_before(reading: Reading, start: int) -> bool:
    """An English listing's head noun comes before the vocabulary's noun ("the lines of order 96647"): the
    vocabulary's noun qualifies the listed rows, it does not name them."""
    return reading.language == "en" and reading.listed is not None and reading.listed[1] <= start


def _with_reading(decision: IntentDecision, reading: Reading | None, env: DetailEnv) -> IntentDecision:
    """The parser's intent where it read the question (a mixed decision keeps both paths): a listing
    whose words the model does not all explain is unsupported."""
    if reading is None:
        return decision
    if _deferred(reading, env):  # the template planner answers a listing: never the aggregate path
        return (
            replace(decision, intent="detail", reasons=[*decision.reasons, "parser reads a listing"])
            if reading.intent == "detail" and decision.intent == "aggregate"
            else decision
        )
    verdict = judge(reading)
    if decision.intent == "mixed":  # "... customers in INDIA, with their phone numbers": rows, not a mix
        listed = (
            reading.intent == "detail"
            and verdict.answers
            and not reading.measures
            and not reading.marks_of("count", "avg", "sum", "share")
        )
        return (
            replace(decision, intent="detail", reasons=[*decision.reasons, "parser reads a listing"])
            if listed
            else decision
        )
    if reading.intent is None:  # "customers based in California": an unknown name is no unfiltered answer
        if reading.unknown and reading.mentions and decision.intent in ("aggregate", "detail"):
            return replace(decision, intent="unsupported", reasons=[*decision.reasons, f"parser: {verdict.refusal}"])
        return decision
    if reading.intent == "detail" and not verdict.answers and not reading.refusal:
        return replace(decision, intent="unsupported", reasons=[*decision.reasons, f"parser: {verdict.refusal}"])
    if reading.intent == decision.intent or (decision.intent == "clarify" and _unasked_rows(reading)):
        return decision  # "can u pull the delay numbers for me": all rows of a table answer no vague question
    # "how many members joined last month, and who are they?": an aggregate and a clause about its rows
    intent = (
        "mixed"
        if reading.intent == "aggregate" and verdict.answers and rows_clause(reading.text, [])
        else reading.intent
    )
    return replace(
        decision,
        intent=cast("Intent", intent),
        reasons=[*decision.reasons, f"parser reads {intent} (classifier said {decision.intent})"],
    )


def _crag_gate(decision: IntentDecision, retrieval: Any) -> IntentDecision:
    """An aggregate whose retrieval CRAG found insufficient even after corrective retrieval (nothing in the
    index matches the question) is refused, naming the missing words, instead of answered by a guessed query."""
    crag = getattr(retrieval, "crag", None)
    if decision.intent != "aggregate" or crag is None or crag.decision != "insufficient":
        return decision
    missing = f": nothing matches {', '.join(crag.missing)}" if crag.missing else ""
    return replace(decision, intent="unsupported", reasons=[*decision.reasons, f"crag: insufficient{missing}"])


def _named_in(entities: list[EntityMatch], text: str) -> list[EntityMatch]:
    """The entity rows whose label the (sub-)question names: they filter its aggregate."""
    lowered = text.lower()
    return [e for e in entities if str(e.label).lower() in lowered]


class _Clock:
    def __init__(self, timings: dict[str, float]) -> None:
        self.timings = timings
        self.last = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.timings[name] = round((now - self.last) * 1000 + self.timings.get(name, 0.0), 3)
        self.last = now


def _recall_rows(c: Components, question: str) -> tuple[list[RowHit], BaseException | None]:
    """SAG row recall, or no rows and the error when the SAG store is unreachable: aggregate questions
    still get answered; detail ones get the error (the API answers 503)."""
    from sag_index.backends.failover import is_unreachable
    from sag_index.errors import StoreUnavailable

    try:
        return c.recall_rows(question), None
    except Exception as err:
        if not is_unreachable(err):
            raise
        return [], err if isinstance(err, StoreUnavailable) else StoreUnavailable(
            f"the SAG store is unreachable: {type(err).__name__}: {err}"
        )


def _detail_context(recalled: list[tuple[str, str, float]], context: Any, env: DetailEnv) -> DetailContext:
    """SAG's recalled tables fused with the tables of the (RAG-Fusion) four-engine context."""
    return detail_context(recalled, context if isinstance(context, RetrievalResult) else None, env.warehouse)


def _connection(conn: Any) -> AbstractContextManager[Any]:
    """``conn`` is a connection, or a pool whose connection is borrowed only while detail SQL runs."""
    return conn.connection() if isinstance(conn, ConnectionPool) else nullcontext(conn)


def _recalled(recall: _Recall, emit: StageCallback) -> dict[str, Any]:
    """The SAG part of the result (tables and rows recalled), emitted with the retrieval's fused assets."""
    sag = {"tables": [_hit_dict(h) for h in recall.table_hits], "rows": [e.to_dict() for e in recall.entities]}
    emit(
        "retrieval",
        {
            "fused": recall.fused[:10],
            "bindings": _bindings(recall.retrieval),
            "entities": sag["rows"],
            "sag_tables": sag["tables"][:5],
        },
    )
    return sag


def _finished(
    result: PipelineResult,
    turn: Turn,
    sag: dict[str, Any],
    pending: Future[list[TableHit]] | None,
    emit: StageCallback,
    timings: dict[str, float],
) -> PipelineResult:
    """The result once its path(s) ran: the SAG tables recalled meanwhile, the ``turn`` a follow-up edits (with
    the Cube query the aggregate path ran), the total time."""
    if pending is not None:
        sag["tables"] = [_hit_dict(h) for h in pending.result()]
    emit("rows", {"columns": result.table.columns, "row_count": len(result.table.rows)})
    result.turn = replace(turn, cube_query=getattr(result.aggregate, "cube_query", None))
    timings["total"] = round(sum(v for k, v in timings.items() if k != "total"), 3)
    return result


def _with_context(question: str, previous: Turn | None) -> tuple[str, str | None]:
    """A follow-up ("and by channel?") is read together with the previous question."""
    if previous is None or not FOLLOW_UP.search(question) or len(question) > 60:
        return question, None
    return f"{previous.question} {question}", previous.question


def _follow_up_period(understanding: Understanding, follow_up: FollowUp) -> list[TimeRange]:
    """The periods an edited query covers, first: the follow-up's own ("and in 2024?"), else the previous
    query's (found among the periods of the joined conversation, which keeps their labels)."""
    if follow_up.understanding.time_ranges:
        return list(follow_up.understanding.time_ranges)
    previous = next(
        (td["dateRange"] for td in follow_up.previous.get("timeDimensions", []) if td.get("dateRange")), None
    )
    ranges = list(understanding.time_ranges)
    return sorted(ranges, key=lambda r: r.date_range() != previous)


def _limit(understanding: Understanding) -> int | None:
    ranking = getattr(understanding, "ranking", None)
    return ranking.limit if ranking is not None and ranking.limit else None


def _time_range(understanding: Understanding) -> tuple[date, date] | None:
    tr = understanding.time_range
    return (tr.start, tr.end) if tr is not None else None


def _first_text_column(table: ResultTable) -> list[Any]:
    for i, _ in enumerate(table.columns):
        values = [r[i] for r in table.rows]
        if values and all(isinstance(v, str) for v in values):
            return values
    return []


def _hit_dict(hit: Any) -> dict[str, Any]:
    return {
        "table": str(hit.table).rsplit(".", 1)[-1],
        "title": getattr(hit, "title", ""),
        "score": float(hit.score),
        "event_ids": list(getattr(hit, "event_ids", []) or []),
        "chunk_ids": list(getattr(hit, "chunk_ids", []) or []),
    }


def _table_words(retrieval: dict[str, Any]) -> dict[str, str]:
    """The question's words bound to a table, with the cube each names."""
    bindings = getattr(retrieval.get("result"), "term_bindings", None) or []
    return {
        (b.matched or b.canonical_term): b.mapped_asset_id.removeprefix("table:")
        for b in bindings
        if b.mapped_asset_type == "table"
    }


def _ranked_words(text: str, retrieval: dict[str, Any]) -> list[str]:
    """The question's table words whose rows a number ranks: the clause holding them asks for those rows."""
    return ranked_tables(text, list(_table_words(retrieval)))


def _sub_dict(sub: Any) -> dict[str, Any]:
    if isinstance(sub, dict):
        return sub
    if isinstance(sub, str):
        return {"text": sub}
    if is_dataclass(sub) and not isinstance(sub, type):
        return asdict(sub)
    return {"text": getattr(sub, "text", str(sub)), "kind": getattr(sub, "kind", None)}


def _sub_dict_intent(sub_queries: list[Any], text: str) -> str | None:
    for sub in sub_queries:
        d = _sub_dict(sub)
        if d.get("text") == text:
            return d.get("intent") or d.get("kind")
    return None


def _bindings(retrieval: dict[str, Any]) -> list[dict[str, Any]]:
    return [b.to_dict() for b in getattr(retrieval.get("result"), "term_bindings", []) or []]


def _catalog_decision(decision: IntentDecision, hit: TableHit) -> IntentDecision:
    """ "Which table has complaint reasons?" asks the catalog: SAG table recall answers it (detail path)."""
    decision.reasons = [
        *decision.reasons,
        f"catalog question answered by SAG table recall ({hit.table}); classifier said {decision.intent}",
    ]
    decision.intent, decision.confidence = "detail", max(float(decision.confidence), 0.8)
    return decision


def _plain_problem(problem: Any) -> Any:
    return problem.to_dict() if hasattr(problem, "to_dict") else problem


def _intent_dict(decision: IntentDecision) -> dict[str, Any]:
    return {
        "intent": decision.intent,
        "confidence": round(float(decision.confidence), 4),
        "reasons": list(decision.reasons),
    }


def _refused_result(
    question: str, understanding: Understanding, request: WriteRequest, timings: dict[str, float]
) -> PipelineResult:
    """The pipeline's answer to a write request: intent ``unsupported``, no table, the refusal as its error."""
    language = getattr(understanding, "language", "en")
    decision = IntentDecision(intent="unsupported", confidence=1.0, reasons=[f"write request: {request.verb}"])
    timings["total"] = round(sum(v for k, v in timings.items() if k != "total"), 3)
    return PipelineResult(
        question=question,
        understanding=understanding,
        intent=decision,
        sub_queries=[],
        retrieval={"fused": []},
        sag={"tables": [], "rows": []},
        table=ResultTable([]),
        timings_ms=timings,
        error={"type": "WriteRequest", "message": request.message(language)},
        turn=Turn(question=question, intent="unsupported"),
    )
