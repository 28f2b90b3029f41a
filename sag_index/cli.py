"""``cubesage sag ...``: index documents or the warehouse, search with ``--explain``, status, reset."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from cubesage_core.settings import Settings
    from sag_index.processor import Processor

app = typer.Typer(help="SAG index: chunk -> one event + entities; 8-step multi-hop retrieval.", no_args_is_help=True)
console = Console(stderr=True)


def _context():
    from cubesage_core.cli import bootstrap_or_exit
    from cubesage_core.settings import get_settings
    from sag_index.backends import get_store

    settings = get_settings()
    url = bootstrap_or_exit(settings)
    store = get_store(settings, url)
    if store.fallback_reason:
        console.print(f"[yellow]using the PostgreSQL store: {store.fallback_reason}[/]")
    return url, store, settings


def _warehouse_map(ctx: typer.Context, url: str, required: bool):
    """The model's table names and entity tables, from the provider the root ``cubesage`` app puts in
    ``ctx.obj`` (it lives above this package). Without a provider or a configured model: an empty map
    (pages are then linked by their front matter only), or a CLI error when ``required``."""
    from cubesage_core.cli import SETUP_ERRORS, fail
    from sag_index.warehouse import WarehouseMap

    provider = getattr(ctx.find_root().obj, "warehouse_map", None)
    try:
        if provider is None:
            raise ValueError("--warehouse needs the Cube model: run it as 'cubesage sag index --warehouse'")
        return provider(url)
    except (*SETUP_ERRORS, ValueError) as err:
        if required:
            raise fail(err) from err
        return WarehouseMap()


@app.command()
def index(
    ctx: typer.Context,
    paths: list[Path] = typer.Argument(
        None,
        help="Files or folders (.md .txt .html .json .jsonl); pages are "
        "linked to the tables they name (front matter 'tables:').",
    ),
    warehouse: bool = typer.Option(
        False, "--warehouse", help="Index the entity rows of the model's tables and the wiki (--wiki)."
    ),
    wiki: Path | None = typer.Option(None, "--wiki", help="Wiki folder for --warehouse (default: settings.wiki_dir)."),
    batch_size: int = typer.Option(256, min=1, help="Chunks per processor/saver batch."),
    llm: bool = typer.Option(False, "--llm", help="Use the LLM processor (needs CUBESAGE_LLM_URL)."),
) -> None:
    """Index documents (idempotent: unchanged chunks are skipped; an interrupted run resumes)."""
    from sag_index.errors import SagError
    from sag_index.pipeline import index_chunks
    from sag_index.warehouse import index_warehouse
    from sag_index.wiki import load_page, load_wiki

    if not paths and not warehouse:
        raise typer.BadParameter("give files/folders to index, or --warehouse")
    url, store, settings = _context()
    try:
        tables = _warehouse_map(ctx, url, required=warehouse)
        if warehouse:
            report = index_warehouse(url, tables, wiki or settings.wiki_dir, store, progress=True)
            typer.echo(json.dumps(report.as_dict(), ensure_ascii=False))
        if paths:
            chunks = []
            for path in paths:
                chunks.extend(
                    load_wiki(path, tables.tables, tables.nouns)
                    if path.is_dir()
                    else load_page(path, tables.tables, nouns=tables.nouns)
                )
            result = index_chunks(
                chunks,
                url,
                store,
                _processor(url, settings, llm),
                batch_size=batch_size,
                progress=True,
                relation_vectors=True,
            )
            typer.echo(json.dumps(result.as_dict(), ensure_ascii=False))
    except SagError as err:
        console.print(f"[red]{type(err).__name__}: {err}[/]")
        raise typer.Exit(2) from err
    finally:
        store.close()


def _processor(url: str, settings: Settings, llm: bool) -> Processor:
    """The fast processor over the glossary at ``url``; with ``llm``, the LLM processor falling back on it."""
    from sag_index.processor import FastProcessor, load_glossary

    fast = FastProcessor(load_glossary(url))
    if not llm:
        return fast
    from dspy.utils.exceptions import LMConfigurationError

    from cubesage_core.llm import get_lm
    from sag_index.llm_processor import LlmProcessor

    try:
        lm = get_lm(settings)
    except (ValueError, LMConfigurationError) as err:  # dspy.LM refuses the model's parameters
        raise typer.BadParameter(f"the LLM model {settings.llm_model!r} cannot be used: {err}") from err
    if lm is None:
        raise typer.BadParameter("--llm needs an LLM endpoint (CUBESAGE_LLM_URL)")
    return LlmProcessor(lm, fallback=fast)


@app.command()
def search(
    question: str = typer.Argument(..., help="The question."),
    top_k: int = typer.Option(5, min=1, max=100, help="Events to select (step 7)."),
    max_hops: int = typer.Option(1, min=0, max=3, help="Multi-hop expansion depth (step 5); 0 disables it."),
    explain: bool = typer.Option(False, "--explain", help="Print every step's candidates and timings (JSON)."),
    tables: bool = typer.Option(False, "--tables", help="Also show recall_tables and recall_rows (warehouse)."),
    llm: bool = typer.Option(False, "--llm", help="Step 1 NER and step 7 selection by the LLM (DSPy)."),
) -> None:
    """Run the 8-step retrieval for a question."""
    from cubesage_core.llm import question_budget, using_settings
    from sag_index.errors import SagError
    from sag_index.recall import SagRecall
    from sag_index.retrieval import RetrievalParams, SagRetriever

    url, store, settings = _context()
    try:
        if llm and not settings.llm_url:
            raise typer.BadParameter("--llm needs an LLM endpoint (CUBESAGE_LLM_URL)")
        retriever = (
            SagRetriever.with_llm(url, store, settings.llm_selection_tokens) if llm else SagRetriever(url, store)
        )
        with using_settings(settings), question_budget(settings, use_llm=llm):
            result = retriever.retrieve(question, RetrievalParams(top_k=top_k, max_hops=max_hops))
        if explain:
            typer.echo(json.dumps(result.explain(), ensure_ascii=False, indent=2, default=str))
        else:
            table = Table("#", "score", "hop", "title", "source")
            for i, event in enumerate(result.events, 1):
                table.add_row(str(i), f"{event.score:.3f}", str(event.hop), event.title, event.source)
            Console().print(table)
            console.print(f"{result.total_ms:.1f} ms ({result.modes})")
        if tables:
            recall = SagRecall(url, store, settings)
            typer.echo(
                json.dumps(
                    {
                        "tables": [vars(t) for t in recall.recall_tables(question)],
                        "rows": [vars(r) for r in recall.recall_rows(question)],
                    },
                    ensure_ascii=False,
                    indent=2,
                    default=str,
                )
            )
            recall.close()
        retriever.close()
    except SagError as err:
        console.print(f"[red]{type(err).__name__}: {err}[/]")
        raise typer.Exit(2) from err
    finally:
        store.close()


@app.command()
def status() -> None:
    """Counts of chunks (pending/indexed), events, entities, links and store documents."""
    from cubesage_core.db import connection
    from sag_index import repository

    url, store, _ = _context()
    with connection(url) as conn:
        counts = repository.counts(conn)
    typer.echo(
        json.dumps(
            {
                "relational": counts,
                "store": {"backend": store.backend, **store.count(), "fallback": store.fallback_reason},
            }
        )
    )
    store.close()


@app.command()
def reset(yes: bool = typer.Option(False, "--yes", help="Do not ask for confirmation.")) -> None:
    """Delete the whole SAG index (relational tables and the store's documents)."""
    from cubesage_core.db import connection

    if not yes:
        typer.confirm("Delete every SAG chunk, event, entity and vector?", abort=True)
    url, store, _ = _context()
    with connection(url) as conn:
        conn.execute("TRUNCATE sag.source_chunk, sag.event, sag.entity, sag.event_entity CASCADE")
    store.reset()
    store.close()
    typer.echo("SAG index cleared")
