"""The ``cubesage`` command line: the root app that mounts each package's commands.

The programs above ``answer`` (``bench``, ``demo``) are not imported here: they declare their command groups
as ``cubesage.commands`` entry points (pyproject.toml), and the root group loads one when it is named (or
when the help lists them).
"""

from __future__ import annotations

import json
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from typer.core import TyperGroup

if TYPE_CHECKING:  # the click that typer vendors: TyperGroup's methods are typed with its classes
    from typer._click import Command, Context

from answer import ask_cli, feedback_cli, init_cli, keys_cli
from answer.bootstrap import warehouse_map_of
from answer.calibration import suite_samples
from answer.serve_cli import serve
from cube_models.cli import app as cube_app
from cube_models.cli import model_app
from cubesage_core.settings import get_settings
from fourengine.calibration import Sample
from fourengine.cli import app as fourengine_app
from sag_index.cli import app as sag_app
from sag_index.warehouse import WarehouseMap

COMMAND_GROUP = "cubesage.commands"


class _RootGroup(TyperGroup):
    """The root command group: its own commands, then the installed ``cubesage.commands`` entry points."""

    def list_commands(self, ctx: Context) -> list[str]:
        own = super().list_commands(ctx)
        return own + [name for name in sorted(_entries()) if name not in own]

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        command = super().get_command(ctx, cmd_name)
        entry = _entries().get(cmd_name)
        if command is not None or entry is None:
            return command
        loaded = typer.main.get_command(entry.load())
        loaded.name = cmd_name
        return loaded


def _entries() -> dict[str, EntryPoint]:
    return {e.name: e for e in entry_points(group=COMMAND_GROUP)}


app = typer.Typer(
    name="cubesage",
    cls=_RootGroup,
    help="Ask business questions in English or Chinese; get numbers, the table behind them, a chart and provenance.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.command()(ask_cli.ask)
app.command()(ask_cli.regress)
app.add_typer(sag_app, name="sag")
app.add_typer(cube_app, name="cube")
app.add_typer(model_app, name="model")
app.add_typer(fourengine_app, name="fourengine")
app.add_typer(keys_cli.app, name="keys")
app.add_typer(feedback_cli.app, name="feedback")
app.command("serve")(serve)
app.command("init")(init_cli.init)
app.add_typer(init_cli.warehouse_app, name="warehouse")

console = Console()


class CliContext:
    """What package commands need from above their package, passed as ``ctx.obj``."""

    def warehouse_map(self, url: str) -> WarehouseMap:
        return warehouse_map_of(url)

    def calibration_samples(self, suite: Path) -> list[Sample]:
        """Labelled questions of a regression suite's dev split (``fourengine calibrate --suite``)."""
        return suite_samples(suite)


@app.callback()
def _root(ctx: typer.Context) -> None:
    ctx.obj = CliContext()


@app.command()
def config(as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table.")) -> None:
    """Print the effective settings (env CUBESAGE_*, cubesage.toml), secrets masked."""
    values = get_settings().masked()
    if as_json:
        typer.echo(json.dumps(values, ensure_ascii=False, indent=2))
        return
    from rich.table import Table

    table = Table("setting", "value", "env var")
    for key, value in values.items():
        table.add_row(key, "" if value is None else str(value), f"CUBESAGE_{key.upper()}")
    console.print(table)


def main() -> None:
    app()
