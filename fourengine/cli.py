"""``cubesage fourengine ...``: run a retrieval, load the glossary / few-shots, approve or reject examples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from fourengine.calibration import Sample

app = typer.Typer(help="Four-engine schema retrieval (R/V/G/D), glossary and few-shot cache.", no_args_is_help=True)


def _url(url: str | None) -> str:
    from cubesage_core.cli import bootstrap_or_exit

    return bootstrap_or_exit(url=url)


@app.command()
def retrieve(
    question: str = typer.Argument(..., help="The question (English or Chinese)."),
    term: list[str] = typer.Option([], "--term", "-t", help="Search terms (default: jieba + word n-grams)."),
    complexity: str = typer.Option("medium", help="simple | medium | complex (few-shot count 2/4/6)."),
    budget: int = typer.Option(4000, min=100, help="Token budget of the rendered context."),
    url: str | None = typer.Option(None, help="Database URL (default: the configured/embedded one)."),
    context_only: bool = typer.Option(False, "--context", help="Print only the rendered context block."),
) -> None:
    """Retrieve the schema context of QUESTION: ranked assets, term bindings, join plan, CRAG grade, timings."""
    from fourengine.retrieve import RetrievalError, Retriever
    from fourengine.settings import RetrievalSettings

    retriever = Retriever(_url(url), RetrievalSettings(token_budget=budget))
    try:
        result = retriever.retrieve_sync(question, term or None, complexity=complexity)
    except RetrievalError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    finally:
        retriever.close()
    typer.echo(result.context.text if context_only else json.dumps(result.to_dict(), ensure_ascii=False, indent=2))


def _samples(ctx: typer.Context, suite: Path) -> list[Sample]:
    """The suite's labelled questions, from the provider the root ``cubesage`` app puts in ``ctx.obj`` (the
    regression suite's format lives above this package)."""
    provider = getattr(ctx.find_root().obj, "calibration_samples", None)
    if provider is None:
        typer.echo("error: --suite needs the regression suites: run it as 'cubesage fourengine calibrate'", err=True)
        raise typer.Exit(2)
    samples: list[Sample] = provider(suite)
    return samples


@app.command()
def calibrate(
    ctx: typer.Context,
    suite: Path | None = typer.Option(
        None, exists=True, dir_okay=False, help="Regression suite whose dev split labels the questions."
    ),
    force: bool = typer.Option(False, help="Fit again even when the stored calibration is current."),
    url: str | None = typer.Option(None, help="Database URL (default: the configured/embedded one)."),
) -> None:
    """Fit the V, D and CRAG thresholds to the embedder's scores on this index (stored in semlayer.calibration)."""
    from cubesage_core.db import connect
    from cubesage_core.embeddings import get_embedder
    from fourengine.calibration import as_dict, ensure

    labelled = _samples(ctx, suite) if suite is not None else None
    with connect(_url(url)) as conn:
        calibration, recomputed = ensure(conn, get_embedder(), labelled, force=force)
    typer.echo(json.dumps({"recomputed": recomputed, **as_dict(calibration)}, ensure_ascii=False, indent=2))


@app.command("load-glossary")
def load_glossary_cmd(
    path: Path = typer.Argument(..., exists=True, dir_okay=False, help="Glossary YAML (see demo/glossary.yaml)."),
    url: str | None = typer.Option(None, help="Database URL."),
) -> None:
    """(Re)load business terms and business rules (idempotent)."""
    from dataclasses import asdict

    from fourengine.glossary import GlossaryError, load_glossary

    try:
        typer.echo(json.dumps(asdict(load_glossary(_url(url), path)), ensure_ascii=False))
    except GlossaryError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc


@app.command("load-few-shots")
def load_few_shots_cmd(
    path: Path = typer.Argument(..., exists=True, dir_okay=False, help="Few-shot YAML (see demo/few_shots.yaml)."),
    url: str | None = typer.Option(None, help="Database URL."),
) -> None:
    """Upsert approved question -> Cube query pairs into the dynamic few-shot cache."""
    from dataclasses import asdict

    from fourengine.fewshot_cache import FewShotError, load_few_shots

    try:
        typer.echo(json.dumps(asdict(load_few_shots(_url(url), path)), ensure_ascii=False))
    except FewShotError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc


@app.command()
def approve(example_id: int, url: str | None = typer.Option(None, help="Database URL.")) -> None:
    """Approve a few-shot example (engine D may return it)."""
    from fourengine import fewshot_cache

    try:
        fewshot_cache.approve(_url(url), example_id)
    except fewshot_cache.FewShotError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc


@app.command()
def reject(example_id: int, url: str | None = typer.Option(None, help="Database URL.")) -> None:
    """Reject a few-shot example (engine D no longer returns it)."""
    from fourengine import fewshot_cache

    try:
        fewshot_cache.reject(_url(url), example_id)
    except fewshot_cache.FewShotError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
