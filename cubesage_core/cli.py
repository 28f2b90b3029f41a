"""What every ``cubesage`` command that touches the database shares: bootstrap it, or exit with one clear line."""

from __future__ import annotations

import typer
from rich.console import Console

from cubesage_core import db
from cubesage_core.settings import ConfigError, Settings

SETUP_ERRORS = (db.DatabaseSetupError, ConfigError)
_err = Console(stderr=True)


def fail(err: Exception, code: int = 2) -> typer.Exit:
    """Print ``error: <message>`` on stderr and return the exit to raise."""
    _err.print(f"[red]error:[/red] {err}", markup=True, highlight=False)
    return typer.Exit(code)


def bootstrap_or_exit(settings: Settings | None = None, url: str | None = None) -> str:
    """``db.bootstrap``: the URL (``url`` or the configured one) with cubesage's schemas, grants and pgvector
    in place, or a CLI error line and exit code 2."""
    try:
        if url is None:
            return db.bootstrap(settings)
        db.apply_schema(url, settings.warehouse_schemas if settings else None)
        return url
    except SETUP_ERRORS as err:
        raise fail(err) from err
