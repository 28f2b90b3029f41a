"""/v1/feedback: verdicts on answers, and the review of the pairs they propose for engine D's cache.

``POST /v1/feedback`` (scope ask) records the verdict; a correction (``corrected_cube_query`` /
``corrected_sql``), or the answer's own query on a thumbs up, is validated (members, compiles, runs
read-only) and stored as a *pending proposal*: it changes no answer. ``GET /v1/feedback/proposals`` and
``POST /v1/feedback/proposals/{id}/approve|reject`` need a key with the admin scope (or use
``cubesage feedback``); approval validates again and adds the pair to the few-shot cache as approved.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

import anyio.to_thread
from litestar import Controller, Request, get, post
from litestar.params import Parameter

from answer.api.cache import AnswerCache
from answer.api.dto import FeedbackRequest, FeedbackResponse, ProposalBody, ProposalList
from answer.api.errors import NotFound, Unprocessable, error_responses
from answer.api.knowledge import Knowledge
from answer.api.store import Store
from answer.feedback import Proposal, ProposalError, UnknownProposal

ADMIN: dict[str, Any] = {"scope": "admin"}


def _pair_to_propose(data: FeedbackRequest, plan: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    if data.corrected_cube_query is not None or data.corrected_sql is not None:
        return data.corrected_cube_query, data.corrected_sql
    if data.verdict == "up":
        cube_query = plan.get("cube_query")
        sql = None if cube_query else plan.get("sql")
        return (cube_query if isinstance(cube_query, dict) else None), (sql if isinstance(sql, str) else None)
    return None, None


def _body(p: Proposal) -> ProposalBody:
    return ProposalBody(
        proposal_id=p.proposal_id,
        query_id=p.query_id,
        question=p.question,
        verdict=p.verdict,
        status=p.status,
        cube_query=p.cube_query,
        sql=p.sql,
        comment=p.comment,
        validation=p.validation,
        created_at=p.created_at.isoformat(),
        reviewed_at=p.reviewed_at.isoformat() if p.reviewed_at else None,
        reviewed_by=p.reviewed_by,
        cache_id=p.cache_id,
    )


async def _review(action: Any, proposal_id: int, reviewer: str) -> Proposal:
    try:
        return await anyio.to_thread.run_sync(action, proposal_id, reviewer)
    except UnknownProposal as err:
        raise NotFound(str(err)) from err
    except ProposalError as err:
        raise Unprocessable(str(err)) from err


class FeedbackController(Controller):
    path = "/v1/feedback"
    tags = ("feedback",)

    @post(
        "/",
        summary="Rate an answer; a correction becomes a proposal an admin reviews",
        status_code=200,
        responses=error_responses(400, 401, 403, 404, 413, 415, 422, 429, 503),
    )
    async def feedback(
        self, data: FeedbackRequest, request: Request, store: Store, knowledge: Knowledge
    ) -> FeedbackResponse:
        record = await store.get_query(data.query_id)
        if record is None:
            raise NotFound(f"no query with id {data.query_id}")
        cube_query, sql = _pair_to_propose(data, record.plan)
        proposal = None
        if cube_query is not None or sql is not None:
            validation = await anyio.to_thread.run_sync(knowledge.validate, cube_query, sql)
            if not validation.ok:
                raise Unprocessable("the correction was not proposed: " + "; ".join(validation.problems))
            proposal = await anyio.to_thread.run_sync(
                lambda: knowledge.propose(
                    query_id=str(data.query_id),
                    question=record.question,
                    verdict=data.verdict,
                    cube_query=cube_query,
                    sql=sql,
                    comment=data.comment,
                    api_key_id=request.state.api_key_id,
                    validation=validation,
                )
            )
        await store.set_feedback(
            data.query_id,
            {
                "verdict": data.verdict,
                "corrected_cube_query": data.corrected_cube_query,
                "corrected_sql": data.corrected_sql,
                "comment": data.comment,
                "proposal_id": proposal.proposal_id if proposal else None,
                "api_key_id": request.state.api_key_id,
                "at": datetime.now(UTC).isoformat(),
            },
        )
        if proposal is None:
            return FeedbackResponse(
                query_id=str(data.query_id),
                verdict=data.verdict,
                learned=False,
                message="recorded (nothing to propose: no query or correction)",
            )
        return FeedbackResponse(
            query_id=str(data.query_id),
            verdict=data.verdict,
            learned=False,
            status="pending",
            proposal_id=proposal.proposal_id,
            message=f"proposed for review: an admin approves it with 'cubesage feedback approve "
            f"{proposal.proposal_id}' (or POST /v1/feedback/proposals/{proposal.proposal_id}/approve)",
        )

    @get(
        "/proposals",
        summary="Feedback proposals (admin scope)",
        opt=ADMIN,
        responses=error_responses(400, 401, 403, 429, 503),
    )
    async def proposals(
        self,
        knowledge: Knowledge,
        status: Literal["pending", "approved", "rejected", "all"] = "pending",
        limit: int = Parameter(default=100, ge=1, le=1000),
    ) -> ProposalList:
        found = await anyio.to_thread.run_sync(knowledge.proposals, None if status == "all" else status, limit)
        return ProposalList(proposals=[_body(p) for p in found])

    @post(
        "/proposals/{proposal_id:int}/approve",
        summary="Approve a proposal into the few-shot cache (admin)",
        status_code=200,
        opt=ADMIN,
        responses=error_responses(400, 401, 403, 404, 415, 422, 429, 503),
    )
    async def approve(
        self, proposal_id: int, request: Request, knowledge: Knowledge, answer_cache: AnswerCache
    ) -> ProposalBody:
        proposal = await _review(knowledge.approve, proposal_id, f"key:{request.state.api_key_id}")
        answer_cache.clear()
        return _body(proposal)

    @post(
        "/proposals/{proposal_id:int}/reject",
        summary="Reject a proposal (admin)",
        status_code=200,
        opt=ADMIN,
        responses=error_responses(400, 401, 403, 404, 415, 422, 429, 503),
    )
    async def reject(self, proposal_id: int, request: Request, knowledge: Knowledge) -> ProposalBody:
        return _body(await _review(knowledge.reject, proposal_id, f"key:{request.state.api_key_id}"))
