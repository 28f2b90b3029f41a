"""``cubesage bench ...``: each benchmark prints JSON lines on stdout."""

from __future__ import annotations

from pathlib import Path

import typer

app = typer.Typer(help="Benchmarks (JSON lines on stdout).", no_args_is_help=True)


@app.command()
def multihop(
    questions: Path = typer.Option(..., exists=True, dir_okay=False, help="HotpotQA- or MuSiQue-style questions JSON."),
    corpus: Path = typer.Option(..., exists=True, dir_okay=False, help="Corpus: {title: [sentences]} or [{title, text}]."),
    backend: str | None = typer.Option(None, help="postgres | elasticsearch (default: the configured store)."),
    es_url: str | None = typer.Option(None, help="Elasticsearch URL (default: settings; else one is started)."),
) -> None:
    """Multi-hop passage Recall@2/5/10, indexing throughput and query latency: SAG vs BM25/dense/RRF."""
    from bench.multihop import run

    run(questions, corpus, backend=backend, es_url=es_url)
