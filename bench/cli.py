"""``cubesage bench ...``: each benchmark prints JSON lines on stdout."""

from __future__ import annotations

import typer

app = typer.Typer(help="Benchmarks (JSON lines on stdout).", no_args_is_help=True)
