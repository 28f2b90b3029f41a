"""``cubesage keys create|list|scopes|revoke``: API keys of the HTTP API (the token is printed once)."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

from answer import keys
from cubesage_core.cli import bootstrap_or_exit

app = typer.Typer(help="API keys for the HTTP API (stored as sha256 hashes).", no_args_is_help=True)
err = Console(stderr=True)


def _url() -> str:
    return bootstrap_or_exit()


SCOPE_HELP = "ask (questions, catalog, feedback proposals), ingest (/v1/ingest/*), admin (everything, approvals)."


@app.command()
def create(
    name: str = typer.Option(..., "--name", help="Who or what uses the key."),
    scope: list[str] = typer.Option(["ask"], "--scope", help=f"Repeatable. {SCOPE_HELP}"),
) -> None:
    """Create a key and print its token once (only its hash is stored)."""
    try:
        key, token = keys.create_key(_url(), name, scope)
    except ValueError as e:
        err.print(f"[red]{e}[/red]")
        raise typer.Exit(1) from e
    err.print(
        f"created key [bold]{key.key_id}[/bold] ({key.name}, scopes {', '.join(key.scopes)}); "
        "the token is shown only now:"
    )
    typer.echo(token)


@app.command()
def scopes(
    name_or_id: str = typer.Argument(..., help="Key name or key_id."),
    scope: list[str] = typer.Option(..., "--scope", help=f"Repeatable; replaces the key's scopes. {SCOPE_HELP}"),
) -> None:
    """Replace the scopes of an active key (takes effect within seconds on running servers)."""
    try:
        key = keys.set_scopes(_url(), name_or_id, scope)
    except (ValueError, keys.UnknownKey) as e:
        err.print(f"[red]{e}[/red]")
        raise typer.Exit(1) from e
    err.print(f"key {key.key_id} ({key.name}) now has scopes {', '.join(key.scopes)}")


@app.command("list")
def list_(all_: bool = typer.Option(False, "--all", help="Include revoked keys.")) -> None:
    """List keys (ids and names; tokens are never shown again)."""
    table = Table("key_id", "name", "scopes", "created", "last used", "revoked")
    for k in keys.list_keys(_url(), include_revoked=all_):
        table.add_row(
            k.key_id,
            k.name,
            ",".join(k.scopes),
            f"{k.created_at:%Y-%m-%d %H:%M}",
            f"{k.last_used_at:%Y-%m-%d %H:%M}" if k.last_used_at else "",
            f"{k.revoked_at:%Y-%m-%d %H:%M}" if k.revoked_at else "",
        )
    Console().print(table)


@app.command()
def revoke(name_or_id: str = typer.Argument(..., help="Key name or key_id.")) -> None:
    """Revoke a key (takes effect within seconds on running servers)."""
    try:
        key = keys.revoke_key(_url(), name_or_id)
    except keys.UnknownKey as e:
        err.print(f"[red]{e}[/red]")
        raise typer.Exit(1) from e
    err.print(f"revoked key {key.key_id} ({key.name})")
