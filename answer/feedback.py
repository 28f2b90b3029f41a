"""Feedback proposals: a question -> (Cube query | SQL) pair proposed through ``/v1/feedback``.

A proposal is stored unapproved in ``semlayer.feedback_proposal`` after validation: a Cube query
must use only the model's members, compile, and run (built-in compiler, read-only, rolled back,
under the reader role); SQL must pass the SQL guard and run the same way. Only approval — an API key
with the admin scope, or ``cubesage feedback approve`` — validates it again and copies it into
engine D's ``dynamic_few_shot_cache`` as approved; nothing else ever reaches that cache from feedback.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol
from uuid import UUID

from psycopg.types.json import Jsonb

from cubesage_core import db
from cubesage_core.embeddings import Embedder
from cubesage_core.settings import Settings

Status = Literal["pending", "approved", "rejected"]
STATUSES: tuple[str, ...] = ("pending", "approved", "rejected")
VALIDATION_ROWS = 100  # rows a validation run may fetch
_COLUMNS = (
    "proposal_id, query_id, question, verdict, cube_query, sql, comment, api_key_id, status, validation, "
    "created_at, reviewed_at, reviewed_by, cache_id"
)


class ProposalError(ValueError):
    """A proposal cannot be approved or rejected (not pending, or it no longer validates)."""


class UnknownProposal(LookupError):
    """No proposal has that id."""


@dataclass
class Validation:
    """What validating a pair found: problems (empty = valid) and what the checks saw."""

    problems: list[str] = field(default_factory=list)
    checks: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class Proposal:
    proposal_id: int
    query_id: str
    question: str
    verdict: str
    cube_query: dict[str, Any] | None
    sql: str | None
    comment: str | None
    api_key_id: str | None
    status: Status
    validation: dict[str, Any]
    created_at: datetime
    reviewed_at: datetime | None = None
    reviewed_by: str | None = None
    cache_id: int | None = None


class Validator(Protocol):
    def validate(self, cube_query: dict[str, Any] | None, sql: str | None) -> Validation: ...


def _proposal(row: tuple) -> Proposal:
    values = list(row)
    values[1] = str(values[1])
    return Proposal(*values)


def propose(
    url: str,
    *,
    query_id: UUID | str,
    question: str,
    verdict: str,
    cube_query: dict[str, Any] | None,
    sql: str | None,
    comment: str | None,
    api_key_id: str | None,
    validation: Validation,
) -> Proposal:
    """Store a validated pair as a pending proposal (never as a few-shot)."""
    if not validation.ok:
        raise ProposalError("an invalid pair is not proposed: " + "; ".join(validation.problems))
    with db.connection(url) as conn:
        row = conn.execute(
            f"INSERT INTO semlayer.feedback_proposal (query_id, question, verdict, cube_query, sql, comment, "
            f"api_key_id, validation) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING {_COLUMNS}",
            (
                str(query_id),
                question,
                verdict,
                Jsonb(cube_query) if cube_query is not None else None,
                sql,
                comment,
                api_key_id,
                Jsonb(validation.checks),
            ),
        ).fetchone()
    return _proposal(db.one(row))


def list_proposals(url: str, status: str | None = "pending", limit: int = 100) -> list[Proposal]:
    """Proposals with ``status`` (None = all), newest first."""
    if status is not None and status not in STATUSES:
        raise ProposalError(f"status must be one of {', '.join(STATUSES)}")
    where, params = ("WHERE status = %s", [status]) if status else ("", [])
    with db.connection(url) as conn:
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM semlayer.feedback_proposal {where} "
            "ORDER BY created_at DESC, proposal_id DESC LIMIT %s",
            [*params, limit],
        ).fetchall()
    return [_proposal(r) for r in rows]


def get_proposal(url: str, proposal_id: int) -> Proposal:
    with db.connection(url) as conn:
        row = conn.execute(
            f"SELECT {_COLUMNS} FROM semlayer.feedback_proposal WHERE proposal_id = %s", (proposal_id,)
        ).fetchone()
    if row is None:
        raise UnknownProposal(f"no feedback proposal with id {proposal_id}")
    return _proposal(row)


def _review(
    url: str,
    proposal_id: int,
    status: Status,
    reviewer: str,
    cache_id: int | None = None,
    validation: dict[str, Any] | None = None,
) -> Proposal:
    """Move a pending proposal to ``status`` (atomically: two reviewers cannot both act on it)."""
    with db.connection(url) as conn:
        row = conn.execute(
            f"UPDATE semlayer.feedback_proposal SET status = %s, reviewed_at = now(), reviewed_by = %s, "
            f"cache_id = %s, validation = COALESCE(%s, validation) WHERE proposal_id = %s AND status = 'pending' "
            f"RETURNING {_COLUMNS}",
            (status, reviewer, cache_id, Jsonb(validation) if validation is not None else None, proposal_id),
        ).fetchone()
    if row is None:
        current = get_proposal(url, proposal_id)  # raises UnknownProposal
        raise ProposalError(f"proposal {proposal_id} is {current.status}, not pending")
    return _proposal(row)


def approve(
    url: str, proposal_id: int, *, reviewer: str, validator: Validator, embedder: Embedder | None = None
) -> Proposal:
    """Validate the pending proposal again and add it to engine D's cache as approved."""
    from fourengine.fewshot_cache import add_example

    proposal = get_proposal(url, proposal_id)
    if proposal.status != "pending":
        raise ProposalError(f"proposal {proposal_id} is {proposal.status}, not pending")
    validation = validator.validate(proposal.cube_query, proposal.sql)
    if not validation.ok:
        raise ProposalError(f"proposal {proposal_id} no longer validates: " + "; ".join(validation.problems))
    cache_id = add_example(
        url, proposal.question, cube_query=proposal.cube_query, sql=proposal.sql, approved=True, embedder=embedder
    )
    return _review(url, proposal_id, "approved", reviewer, cache_id, validation.checks)


def reject(url: str, proposal_id: int, *, reviewer: str) -> Proposal:
    return _review(url, proposal_id, "rejected", reviewer)


class ModelValidator:
    """Validates pairs against the configured model and warehouse (see the module docstring)."""

    def __init__(self, settings: Settings, url: str) -> None:
        self.settings, self.url = settings, url

    def validate(self, cube_query: dict[str, Any] | None, sql: str | None) -> Validation:
        out = Validation()
        if cube_query is not None:
            self._cube_query(cube_query, out)
        if sql is not None:
            self._sql(sql, out)
        return out

    def _cube_query(self, query: dict[str, Any], out: Validation) -> None:
        from cube_models.backends.builtin import BuiltinBackend
        from cube_models.errors import CubeModelsError
        from cube_models.model import load_model
        from cube_models.validate import validate

        model = load_model(self.settings.model_folder())
        problems = [f"cube query: {p}" for p in validate(query, model)]
        if problems:
            out.problems += problems
            return
        limited = {**query, "limit": min(int(query.get("limit") or VALIDATION_ROWS), VALIDATION_ROWS)}
        backend = BuiltinBackend(self.url, model, self.settings.model_copy(update={"warehouse_cache_refresh_s": 0}))
        started = time.perf_counter()
        try:
            result = backend.load(limited)
        except (CubeModelsError, ValueError) as err:
            out.problems.append(f"cube query does not run: {err}")
            return
        finally:
            backend.close()
        out.checks["cube_query"] = {
            "sql": result.sql,
            "rows": len(result.rows),
            "ms": round((time.perf_counter() - started) * 1000, 1),
        }

    def _sql(self, sql: str, out: Validation) -> None:
        from router.sqlguard import SqlGuardError, guard_sql
        from router.sqlguard.assets import policy_from_assets
        from router.sqlguard.execute import QueryExecutionError, run_readonly

        started = time.perf_counter()
        with db.connection(self.url) as conn:
            policy = policy_from_assets(
                conn, max_limit=VALIDATION_ROWS, default_limit=VALIDATION_ROWS, schemas=self.settings.warehouse_schemas
            )
            try:
                guarded = guard_sql(sql, policy)
                rows = run_readonly(conn, guarded, timeout_ms=self.settings.statement_timeout_ms)
            except (SqlGuardError, QueryExecutionError) as err:
                out.problems.append(f"sql: {err}")
                return
        out.checks["sql"] = {
            "sql": guarded.sql,
            "rows": len(rows.rows),
            "tables": list(guarded.tables),
            "ms": round((time.perf_counter() - started) * 1000, 1),
        }
