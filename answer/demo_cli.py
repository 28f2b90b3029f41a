"""``cubesage demo ...``: start the embedded stack and load the demo warehouse and its indices."""

from __future__ import annotations

import time

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from cubesage_core import db, demo_warehouse
from cubesage_core.settings import get_settings

app = typer.Typer(help="The demo warehouse 'shop': load it, index it, inspect it.", no_args_is_help=True)
console = Console(stderr=True)


@app.command()
def load(
    scale: float = typer.Option(1.0, min=0.01, max=20.0, help="1.0 = 100,000 orders, 20,000 customers."),
) -> None:
    """(Re)load the demo warehouse, then build the semantic assets, glossary, few-shots and SAG indices."""
    settings = get_settings()
    started = time.monotonic()
    url = db.database_url(settings)
    db.apply_schema(url)
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=console) as progress:
        task = progress.add_task("warehouse tables", total=len(demo_warehouse.TABLE_ORDER))
        counts = demo_warehouse.load(url, scale, settings.demo_dir,
                                     progress=lambda name, n: progress.advance(task))
    for name, n in counts.items():
        console.print(f"  warehouse.{name}: {n:,} rows")
    console.print(f"[green]demo loaded[/green] in {time.monotonic() - started:.1f}s")
