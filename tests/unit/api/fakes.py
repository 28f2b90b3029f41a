"""Small fakes of the answering service, the store and the knowledge port for API unit tests."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any
from uuid import UUID

from answer.api.dto import CatalogMember, CatalogResponse, CatalogTerm, QueryRecord
from answer.api.store import audit_row
from answer.feedback import Proposal, ProposalError, UnknownProposal, Validation
from answer.keys import KeyGrant, hash_token


class FakeBackendUnavailable(Exception):
    """Named like the pipeline's *Unavailable errors (mapped to 503)."""


@dataclass
class FakePayload:
    query_id: str
    question: str
    intent: str
    text: str
    table: dict[str, Any]
    chart: dict[str, Any] | None
    provenance: dict[str, Any]
    timings_ms: dict[str, float] = field(default_factory=dict)


class FakeService:
    """Answers "GMV by region" style questions with a fixed small table; records the calls it got."""

    streams_stages = True

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.changed: list[str] = []  # knowledge_changed kinds, in order

    def knowledge_changed(self, kind: str) -> None:
        self.changed.append(kind)

    def ask(
        self,
        question: str,
        *,
        session_id: str | None = None,
        mode: str | None = None,
        today: date | None = None,
        previous: Any = None,
        on_stage: Any = None,
    ) -> FakePayload:
        self.calls.append(
            {"question": question, "session_id": session_id, "mode": mode, "today": today, "previous": previous}
        )
        if "unavailable" in question:
            raise FakeBackendUnavailable("search store down")
        if "explode" in question:
            raise RuntimeError("secret internal detail /etc/passwd")
        if "ambiguous" in question:
            raise ValueError("the question is ambiguous: which metric?")
        region_filter = previous.provenance["cube_query"]["dimensions"] if previous else []
        cube_query = {"measures": ["order_items.gmv"], "dimensions": ["regions.name", *region_filter]}
        if on_stage:
            on_stage("intent", {"intent": "aggregate", "confidence": 0.9})
            on_stage("retrieval", {"bindings": [{"term": "GMV"}]})
            on_stage("plan", {"cube_query": cube_query})
            on_stage("rows", {"row_count": 2})
        return FakePayload(
            query_id=str(uuid.uuid4()),
            question=question,
            intent="aggregate",
            text="GMV is highest in East (120.5).",
            table={
                "columns": ["region", "gmv"],
                "rows": [["East", 120.5], ["North", 80.25]],
                "formats": [None, "currency"],
            },
            chart={
                "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
                "mark": "bar",
                "data": {"values": [{"region": "East", "gmv": 120.5}, {"region": "North", "gmv": 80.25}]},
                "encoding": {
                    "x": {"field": "region", "type": "nominal"},
                    "y": {"field": "gmv", "type": "quantitative"},
                },
            },
            provenance={
                "cube_query": cube_query,
                "sql": "SELECT 1",
                "bindings": [{"term": "GMV"}],
                "mode": mode or "fast",
            },
            timings_ms={"total": 3.0},
        )

    def load(
        self,
        queries: list[tuple[str, dict[str, Any]]],
        *,
        today: date | None = None,
        language: str = "en",
        title: str = "",
    ) -> dict[str, Any]:
        self.calls.append({"load": queries, "today": today, "language": language})
        return {
            "table": {
                "columns": ["order_items.gmv"],
                "rows": [[200.75]],
                "labels": ["GMV"],
                "display": [["200.75"]],
                "kinds": ["number"],
                "row_count": 1,
            },
            "chart": {"usermeta": {"shape": "kpi"}},
            "sql": ["SELECT 1"] * len(queries),
            "backend": "builtin",
            "today": (today or date(2025, 6, 30)).isoformat(),
        }

    def suggestions(self, language: str = "en") -> dict[str, Any]:
        questions = ["今年各渠道的GMV"] if language == "zh" else ["GMV by channel this year"]
        return {"questions": questions, "today": "2025-06-30", "period": ["2023-01", "2025-06"]}

    def nl2cube(self, question: str, run: bool = False, today: date | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "cube_query": {"measures": ["order_items.gmv"]},
            "bindings": [{"term": "GMV"}],
            "confidence": 0.8,
        }
        if run:
            out["rows"] = [{"order_items.gmv": 200.75}]
            out["sql"] = "SELECT sum(gmv) FROM warehouse.fact_order_item"
        return out


class MemoryStore:
    """In-memory Store: keys by hash (with scopes; default ask), query log, feedback, a two-member catalog."""

    def __init__(self, tokens: dict[str, str] | None = None, scopes: dict[str, set[str]] | None = None) -> None:
        self.keys = {
            hash_token(t): KeyGrant(key_id, frozenset((scopes or {}).get(key_id, {"ask"})))
            for key_id, t in (tokens or {}).items()
        }
        self.lookups = 0
        self.log: dict[str, dict[str, Any]] = {}
        self.opened = False

    async def open(self) -> None:
        self.opened = True

    async def close(self) -> None:
        self.opened = False

    async def ping(self) -> None:
        return None

    async def key_for(self, token: str) -> KeyGrant | None:
        self.lookups += 1
        return self.keys.get(hash_token(token))

    async def has_active_keys(self) -> bool:
        return bool(self.keys)

    async def log_answer(self, answer: dict[str, Any], *, session_id: str | None, api_key_id: str | None) -> None:
        row = audit_row(answer)
        self.log[row["query_id"]] = {
            **row,
            "session_id": session_id,
            "api_key_id": api_key_id,
            "feedback": None,
            "created_at": datetime.now(UTC).isoformat(),
        }

    async def get_query(self, query_id: UUID) -> QueryRecord | None:
        row = self.log.get(str(query_id))
        if row is None:
            return None
        return QueryRecord(
            query_id=row["query_id"],
            created_at=row["created_at"],
            question=row["question"],
            session_id=row["session_id"],
            intent=row["intent"],
            plan=row["plan"],
            timings=row["timings"],
            executed_sql=row["executed_sql"],
            answer=row["answer"],
            feedback=row["feedback"],
        )

    async def set_feedback(self, query_id: UUID, feedback: dict[str, Any]) -> bool:
        row = self.log.get(str(query_id))
        if row is None:
            return False
        row["feedback"] = feedback
        return True

    async def catalog(self) -> CatalogResponse:
        return CatalogResponse(
            metrics=[CatalogMember(name="order_items.gmv", title="GMV", description="gross merchandise value")],
            dimensions=[CatalogMember(name="regions.name", title="Region", description="sales region")],
            terms=[
                CatalogTerm(
                    term="GMV",
                    synonyms=["成交总额"],
                    language="en",
                    definition="gross value",
                    maps_to="metric:order_items.gmv",
                )
            ],
        )


class FakeKnowledge:
    """Validates: a cube query needs known measures; SQL must start with SELECT. Proposals live in a dict;
    approval moves them into ``learned`` (the stand-in for engine D's cache)."""

    KNOWN = frozenset({"order_items.gmv", "orders.count"})

    def __init__(self) -> None:
        self.learned: list[tuple[str, Any, Any]] = []
        self.proposed: dict[int, Proposal] = {}
        self.ingested: dict[str, int] = {}

    def validate(self, cube_query: dict[str, Any] | None, sql: str | None) -> Validation:
        problems = [f"unknown member {m}" for m in (cube_query or {}).get("measures", []) if m not in self.KNOWN]
        if sql is not None and not sql.strip().lower().startswith("select"):
            problems.append("only a single SELECT is allowed")
        return Validation(problems, {"rows": 1})

    def validate_cube_query(self, query: dict[str, Any]) -> list[str]:
        return [f"unknown member {m}" for m in query.get("measures", []) if m not in self.KNOWN]

    def propose(
        self,
        *,
        query_id: str,
        question: str,
        verdict: str,
        cube_query: Any,
        sql: Any,
        comment: Any,
        api_key_id: Any,
        validation: Validation,
    ) -> Proposal:
        proposal = Proposal(
            len(self.proposed) + 1,
            query_id,
            question,
            verdict,
            cube_query,
            sql,
            comment,
            api_key_id,
            "pending",
            validation.checks,
            datetime.now(UTC),
        )
        self.proposed[proposal.proposal_id] = proposal
        return proposal

    def proposals(self, status: str | None, limit: int) -> list[Proposal]:
        return [p for p in self.proposed.values() if status is None or p.status == status][:limit]

    def _pending(self, proposal_id: int) -> Proposal:
        if proposal_id not in self.proposed:
            raise UnknownProposal(f"no feedback proposal with id {proposal_id}")
        proposal = self.proposed[proposal_id]
        if proposal.status != "pending":
            raise ProposalError(f"proposal {proposal_id} is {proposal.status}, not pending")
        return proposal

    def approve(self, proposal_id: int, reviewer: str) -> Proposal:
        proposal = self._pending(proposal_id)
        self.learned.append((proposal.question, proposal.cube_query, proposal.sql))
        proposal.status, proposal.reviewed_by, proposal.cache_id = "approved", reviewer, len(self.learned)
        return proposal

    def reject(self, proposal_id: int, reviewer: str) -> Proposal:
        proposal = self._pending(proposal_id)
        proposal.status, proposal.reviewed_by = "rejected", reviewer
        return proposal

    def _ingest(self, kind: str, names: list[str]) -> dict[str, Any]:
        seen = self.ingested.setdefault(kind, 0)
        self.ingested[kind] = max(seen, len(names))
        return {"added": len(names) - min(seen, len(names)), "unchanged": min(seen, len(names))}

    def ingest_wiki(self, documents: list[dict[str, str]]) -> dict[str, Any]:
        return self._ingest("wiki", [d["name"] for d in documents])

    def ingest_cube_models(self, files: list[dict[str, str]]) -> dict[str, Any]:
        return self._ingest("models", [f["name"] for f in files])

    def ingest_glossary(self, content: str, fmt: str) -> dict[str, Any]:
        return self._ingest("glossary", content.splitlines())
