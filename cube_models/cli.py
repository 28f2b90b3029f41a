"""``cubesage cube ...``: run Cube queries on either backend, validate them, check and export the models."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from cube_models.errors import CubeModelsError

app = typer.Typer(
    help="Cube semantic models: query (Cube or built-in compiler), validate, check, export.", no_args_is_help=True
)
console = Console()
err_console = Console(stderr=True)


def _fail(exc: Exception) -> typer.Exit:
    from cubesage_core.cli import fail

    return fail(exc)


def _model(model_dir: Path | None) -> Any:
    from cube_models.model import load_model
    from cubesage_core.settings import get_settings

    return load_model(model_dir or get_settings().model_folder())


def _read_query(query: str) -> str:
    if query == "-":
        return typer.get_text_stream("stdin").read()
    if query.startswith("@"):
        return Path(query[1:]).read_text(encoding="utf-8")
    return query


def _backend(kind: str, model: Any) -> Any:
    from cube_models.backends import BuiltinBackend, CubeBackend
    from cube_models.client import CubeClient
    from cubesage_core.db import bootstrap
    from cubesage_core.settings import get_settings

    settings = get_settings()
    if kind == "cube":
        if not settings.cube_url:
            raise CubeModelsError("no Cube server configured: set CUBESAGE_CUBE_URL and CUBESAGE_CUBE_SECRET")
        secret = settings.cube_secret.get_secret_value() if settings.cube_secret else ""
        return CubeBackend(CubeClient(settings.cube_url, secret))
    if kind == "builtin":
        return BuiltinBackend(bootstrap(settings), model, settings)
    if kind == "auto":
        from cube_models.backends import get_backend

        url = bootstrap(settings) if not settings.cube_url or settings.cube_fallback_builtin else None
        return get_backend(settings, url, model)
    raise CubeModelsError(f"unknown backend {kind!r} (auto, cube or builtin)")


@app.command()
def query(
    cube_query: str = typer.Argument(..., metavar="QUERY", help="Cube query JSON, '@file.json', or '-' for stdin."),
    backend: str = typer.Option(
        "auto",
        "--backend",
        "-b",
        help="cube (REST API), builtin (compiler) or auto (Cube when CUBESAGE_CUBE_URL "
        "is set, with the built-in fallback; else builtin).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print rows, SQL and metadata as JSON."),
    today: str | None = typer.Option(
        None, help="Anchor for relative date ranges, YYYY-MM-DD (default: settings.today, else the clock)."
    ),
    model_dir: Path | None = typer.Option(None, help="Folder of Cube YAML models (default: settings.model_dir)."),
) -> None:
    """Run a Cube query and print its rows and the SQL that produced them."""
    from cube_models.query import CubeQuery
    from cubesage_core.cli import SETUP_ERRORS
    from cubesage_core.settings import get_settings

    try:
        parsed = CubeQuery.parse(_read_query(cube_query))
        anchor = date.fromisoformat(today) if today else get_settings().today
        result = _backend(backend, _model(model_dir)).load(parsed, today=anchor)
    except (CubeModelsError, ValueError, OSError, *SETUP_ERRORS) as exc:
        raise _fail(exc) from exc
    if as_json:
        typer.echo(json.dumps(result.to_dict(), ensure_ascii=False, indent=2, default=str))
        return
    keys = list(dict.fromkeys(k for row in result.rows for k in row))
    table = Table(
        *keys,
        title=f"{len(result.rows)} rows from {result.backend} in {result.elapsed_ms:.0f} ms"
        + (f" (total {result.total})" if result.total is not None else ""),
    )
    for row in result.rows[:200]:
        table.add_row(*("" if row.get(k) is None else str(row.get(k)) for k in keys))
    console.print(table)
    if len(result.rows) > 200:
        console.print(f"... {len(result.rows) - 200} more rows (use --json for all)")
    if result.fallback_reason:
        console.print(f"[yellow]{result.fallback_reason}[/yellow]")
    console.print("[bold]SQL[/bold]")
    console.print(result.sql, highlight=False, markup=False)
    if result.params:
        console.print(f"params: {json.dumps(result.params, ensure_ascii=False)}", highlight=False, markup=False)


@app.command()
def sql(
    cube_query: str = typer.Argument(..., metavar="QUERY", help="Cube query JSON, '@file.json', or '-'."),
    today: str | None = typer.Option(None, help="Anchor for relative date ranges, YYYY-MM-DD."),
    model_dir: Path | None = typer.Option(None, help="Folder of Cube YAML models."),
) -> None:
    """Compile a Cube query with the built-in compiler and print the SQL and its bind parameters."""
    from cube_models.compiler import compile_query
    from cubesage_core.settings import get_settings

    settings = get_settings()
    try:
        anchor = date.fromisoformat(today) if today else settings.today
        compiled = compile_query(
            _read_query(cube_query),
            _model(model_dir),
            today=anchor,
            default_limit=settings.default_limit,
            row_cap=settings.query_row_cap,
        )
    except (CubeModelsError, ValueError, OSError) as exc:
        raise _fail(exc) from exc
    typer.echo(compiled.sql)
    typer.echo(f"-- params: {json.dumps(compiled.params, ensure_ascii=False)}")


@app.command()
def validate(
    cube_query: str = typer.Argument(..., metavar="QUERY", help="Cube query JSON, '@file.json', or '-'."),
    model_dir: Path | None = typer.Option(None, help="Folder of Cube YAML models."),
) -> None:
    """List the problems of a Cube query against the model, with suggestions (exit 1 when any)."""
    from cube_models.validate import validate as run_validate
    from cubesage_core.embeddings import get_embedder
    from cubesage_core.settings import get_settings

    try:
        problems = run_validate(
            _read_query(cube_query), _model(model_dir), today=get_settings().today, embedder=get_embedder()
        )
    except (CubeModelsError, OSError) as exc:
        raise _fail(exc) from exc
    for p in problems:
        typer.echo(json.dumps(p.to_dict(), ensure_ascii=False))
    if problems:
        raise typer.Exit(1)
    typer.echo("ok")


@app.command()
def check(model_dir: Path | None = typer.Option(None, help="Folder of Cube YAML models.")) -> None:
    """Load and validate the models; print a summary of cubes, members and joins."""
    try:
        model = _model(model_dir)
    except (CubeModelsError, ValueError) as exc:
        raise _fail(exc) from exc
    table = Table("cube", "measures", "dimensions", "segments", "joins")
    for cube in model.cubes.values():
        table.add_row(
            cube.name,
            str(len(cube.measures)),
            str(len(cube.dimensions)),
            str(len(cube.segments)),
            ", ".join(f"{j.target} ({j.relationship})" for j in cube.joins),
        )
    console.print(table)
    console.print(f"{len(model.cubes)} cubes, {len(model.views)} views: ok")


@app.command()
def export(model_dir: Path | None = typer.Option(None, help="Folder of Cube YAML models.")) -> None:
    """Write the models' semantic assets, embeddings and join edges to the configured database."""
    from cube_models.export import export_assets
    from cubesage_core.cli import bootstrap_or_exit
    from cubesage_core.embeddings import get_embedder
    from cubesage_core.settings import get_settings

    settings = get_settings()
    try:
        model = _model(model_dir)
    except (CubeModelsError, ValueError) as exc:
        raise _fail(exc) from exc
    url = bootstrap_or_exit(settings)
    try:
        report = export_assets(url, model, embedder=get_embedder(settings.embedding_backend))
    except CubeModelsError as exc:
        raise _fail(exc) from exc
    typer.echo(json.dumps({k: v for k, v in report.__dict__.items() if k != "changed_ids"}))


@app.command("rollups")
def rollups_command(
    model_dir: Path | None = typer.Option(None, help="Folder of Cube YAML models."),
    force: bool = typer.Option(False, help="Rebuild every rollup, fresh or not."),
) -> None:
    """Build the models' rollup pre-aggregations that are not fresh (one JSON line per rollup)."""
    import psycopg

    from cube_models import rollups
    from cubesage_core.cli import bootstrap_or_exit
    from cubesage_core.settings import get_settings

    settings = get_settings()
    try:
        model = _model(model_dir)
    except (CubeModelsError, ValueError) as exc:
        raise _fail(exc) from exc
    url = bootstrap_or_exit(settings)
    try:
        builds = rollups.refresh(url, model, tuple(settings.warehouse_schemas), force=force)
    except psycopg.Error as exc:
        raise _fail(CubeModelsError(f"a rollup could not be built: {exc}")) from exc
    for build in builds:
        typer.echo(json.dumps(build.as_dict()))


model_app = typer.Typer(
    help="Cube YAML models of your own warehouse: draft them from the database catalog.", no_args_is_help=True
)


@model_app.command()
def draft(
    schema: list[str] = typer.Option(..., "--schema", "-s", help="Warehouse schema to draft (repeatable)."),
    out: Path | None = typer.Option(
        None, "--out", help="Folder for the YAML files (default: settings.model_dir, else ./model)."
    ),
) -> None:
    """Draft one cube per table (keys, joins, time dimensions, measures, titles), then validate the folder."""
    from cube_models.draft import draft_models
    from cube_models.model import load_model
    from cubesage_core.cli import bootstrap_or_exit
    from cubesage_core.db import connection
    from cubesage_core.settings import get_settings

    settings = get_settings()
    folder = out or settings.model_dir or Path("model")
    url = bootstrap_or_exit(settings.model_copy(update={"warehouse_schemas": schema}))
    with connection(url) as conn:
        reports = draft_models(conn, schema, folder)
    for report in reports:
        if not report.cubes:
            raise _fail(ValueError(f"schema {report.schema!r} has no tables to draft"))
        err_console.print(
            f"{report.schema}: {report.cubes} cubes, {report.joins} joins "
            f"({report.guessed_joins} guessed from column names) -> {folder}"
        )
    try:
        model = load_model(folder)
    except CubeModelsError as exc:
        raise _fail(exc) from exc
    typer.echo(json.dumps({"folder": str(folder), "cubes": sorted(model.cubes)}))
