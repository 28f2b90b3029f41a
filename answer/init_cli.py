"""``cubesage init`` and ``cubesage warehouse load NAME``: bring your own warehouse, or a packaged one."""

from __future__ import annotations

import time
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from answer.init import STEPS, InitConfig, example_question, run_init
from cubesage_core.settings import Settings, get_settings

console = Console(stderr=True)
warehouse_app = typer.Typer(
    help="Packaged warehouses (warehouses/<name>, demo/): load one and set cubesage up.", no_args_is_help=True
)


def _run(config: InitConfig, settings: Settings) -> None:
    """Run the init steps with a progress bar; print what they did and the next command, or one error line."""
    from cube_models.errors import CubeModelsError
    from cubesage_core.cli import SETUP_ERRORS, fail
    from fourengine.fewshot_cache import FewShotError
    from fourengine.glossary import GlossaryError
    from sag_index.errors import SagError

    started = time.monotonic()
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        task = progress.add_task(STEPS[0][0], total=len(STEPS))

        def advance(name: str, line: str) -> None:
            progress.console.print(f"[green]✓[/green] {name}: {line}", highlight=False)
            following = next((n for i, (n, _) in enumerate(STEPS) if i and STEPS[i - 1][0] == name), name)
            progress.update(task, advance=1, description=following)

        try:
            run = run_init(config, settings, on_step=advance)
        except (*SETUP_ERRORS, CubeModelsError, GlossaryError, FewShotError, SagError, OSError) as err:
            raise fail(err) from err
    console.print(f"[bold green]cubesage is ready[/bold green] in {time.monotonic() - started:.1f}s. Next:")
    console.print(f'  cubesage ask "{example_question(run.model)}"', highlight=False)


def init(
    database_url: str | None = typer.Option(
        None, "--database-url", help="PostgreSQL URL (default: settings, else the embedded server)."
    ),
    schema: list[str] = typer.Option(
        None, "--schema", "-s", help="Warehouse schema (repeatable; default: settings.warehouse_schemas)."
    ),
    models: Path | None = typer.Option(
        None,
        "--models",
        help="Cube YAML folder; drafted from the catalog when empty (default: settings.model_dir, else ./model).",
    ),
    glossary: Path | None = typer.Option(None, "--glossary", exists=True, dir_okay=False, help="Glossary YAML."),
    wiki: Path | None = typer.Option(None, "--wiki", exists=True, file_okay=False, help="Wiki pages folder."),
    few_shots: Path | None = typer.Option(
        None, "--few-shots", exists=True, dir_okay=False, help="Approved question -> Cube query pairs (YAML)."
    ),
    config: Path = typer.Option(Path("cubesage.toml"), "--config", help="Settings file to write."),
) -> None:
    """Set cubesage up on your warehouse: check PostgreSQL + pgvector, create schemas and grants, draft and
    validate models, export them, load glossary/few-shots/wiki, index entity rows, write cubesage.toml."""
    settings = get_settings()
    secret = settings.database_url.get_secret_value() if settings.database_url else None
    _run(
        InitConfig(
            database_url=database_url or secret,
            schemas=tuple(schema or settings.warehouse_schemas),
            model_dir=models or settings.model_dir or Path("model"),
            glossary=glossary or settings.glossary,
            wiki_dir=wiki or settings.wiki_dir,
            few_shots=few_shots,
            detail_vocabulary=settings.detail_vocabulary,
            config_path=config,
        ),
        settings,
    )


@warehouse_app.command("list")
def list_packs() -> None:
    """Names of the packaged warehouses."""
    from warehouses.packs import pack_names

    typer.echo("\n".join(pack_names()))


@warehouse_app.command()
def load(
    name: str = typer.Argument(..., help="Pack name (see 'cubesage warehouse list')."),
    database_url: str | None = typer.Option(None, "--database-url", help="PostgreSQL URL."),
    config: Path = typer.Option(Path("cubesage.toml"), "--config", help="Settings file to write."),
) -> None:
    """Load a pack's data into its schema, then run the init steps with the pack's model, glossary,
    few-shots, wiki and detail vocabulary."""
    from cubesage_core import db
    from cubesage_core.cli import SETUP_ERRORS, bootstrap_or_exit, fail
    from warehouses.packs import PackError, get_pack

    try:
        pack = get_pack(name)
    except PackError as err:
        raise fail(err) from err
    settings = get_settings().model_copy(update={"warehouse_schemas": [pack.schema]})
    url = bootstrap_or_exit(settings, url=database_url)
    started = time.monotonic()
    try:
        counts = pack.loader()(url, pack.schema)
        db.apply_schema(url, [pack.schema])  # grants on the tables the loader just created
    except (*SETUP_ERRORS, OSError, ValueError) as err:
        raise fail(err) from err
    console.print(
        f"[green]✓[/green] loaded {pack.title} into {pack.schema} in {time.monotonic() - started:.1f}s: "
        + ", ".join(f"{t} {n}" for t, n in counts.items()),
        highlight=False,
    )
    vocabulary = pack.root / "detail_vocabulary.yaml"
    _run(
        InitConfig(
            database_url=database_url or (settings.database_url.get_secret_value() if settings.database_url else None),
            schemas=(pack.schema,),
            model_dir=pack.model_dir,
            glossary=pack.glossary if pack.glossary.is_file() else None,
            wiki_dir=pack.wiki_dir if pack.wiki_dir.is_dir() else None,
            few_shots=pack.few_shots,
            detail_vocabulary=vocabulary if vocabulary.is_file() else None,
            today=pack.today,
            config_path=config,
            suite=_pack_suite(pack.root),
        ),
        settings,
    )


def _pack_suite(root: Path) -> Path | None:
    """The pack's regression suite (``suite.yaml``, or ``regress/suite.yaml`` as the demo keeps it): its dev
    split calibrates the retrieval thresholds."""
    return next((p for p in (root / "suite.yaml", root / "regress" / "suite.yaml") if p.is_file()), None)
