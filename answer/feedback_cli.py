"""``cubesage feedback list|approve|reject``: review the pairs feedback proposed for engine D's cache."""

from __future__ import annotations

import getpass
import json

import typer
from rich.console import Console
from rich.table import Table

from answer import feedback
from cubesage_core.cli import bootstrap_or_exit, fail
from cubesage_core.settings import get_settings

app = typer.Typer(help="Review feedback proposals (only approved ones reach the few-shot cache).", no_args_is_help=True)
err = Console(stderr=True)


def _reviewer() -> str:
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"


@app.command("list")
def list_(
    status: str = typer.Option("pending", help="pending | approved | rejected | all."),
    limit: int = typer.Option(100, min=1, max=1000),
    as_json: bool = typer.Option(False, "--json", help="Print JSON lines."),
) -> None:
    """Proposals, newest first."""
    try:
        found = feedback.list_proposals(bootstrap_or_exit(), None if status == "all" else status, limit)
    except feedback.ProposalError as e:
        raise fail(e) from e
    if as_json:
        for p in found:
            typer.echo(
                json.dumps(
                    {
                        "proposal_id": p.proposal_id,
                        "status": p.status,
                        "question": p.question,
                        "cube_query": p.cube_query,
                        "sql": p.sql,
                        "comment": p.comment,
                        "api_key_id": p.api_key_id,
                        "created_at": p.created_at.isoformat(),
                    },
                    ensure_ascii=False,
                    default=str,
                )
            )
        return
    table = Table("id", "status", "question", "proposed", "key", "created")
    for p in found:
        table.add_row(
            str(p.proposal_id),
            p.status,
            p.question,
            json.dumps(p.cube_query, ensure_ascii=False) if p.cube_query else (p.sql or ""),
            p.api_key_id or "",
            f"{p.created_at:%Y-%m-%d %H:%M}",
        )
    Console().print(table)


@app.command()
def approve(proposal_id: int = typer.Argument(..., help="Proposal id (cubesage feedback list).")) -> None:
    """Validate the proposal again and add it to the few-shot cache as approved."""
    from cubesage_core.embeddings import get_embedder

    settings = get_settings()
    url = bootstrap_or_exit(settings)
    try:
        p = feedback.approve(
            url,
            proposal_id,
            reviewer=_reviewer(),
            validator=feedback.ModelValidator(settings, url),
            embedder=get_embedder(settings.embedding_backend),
        )
    except (feedback.ProposalError, feedback.UnknownProposal) as e:
        raise fail(e, code=1) from e
    err.print(f"approved proposal {p.proposal_id}: few-shot example {p.cache_id} ({p.question!r})")


@app.command()
def reject(proposal_id: int = typer.Argument(..., help="Proposal id (cubesage feedback list).")) -> None:
    """Reject the proposal (it never reaches the few-shot cache)."""
    try:
        p = feedback.reject(bootstrap_or_exit(), proposal_id, reviewer=_reviewer())
    except (feedback.ProposalError, feedback.UnknownProposal) as e:
        raise fail(e, code=1) from e
    err.print(f"rejected proposal {p.proposal_id} ({p.question!r})")
