"""``cubesage demo ...``: start the embedded stack, build the demo, serve it and ask sample questions."""

from __future__ import annotations

import logging
import os
import threading
import time

import httpx
import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from answer.console_table import rich_table
from cubesage_core import db
from cubesage_core.cli import fail
from cubesage_core.settings import REPO_ROOT, Settings, get_settings
from warehouses.packs import get_pack

app = typer.Typer(help="The demo warehouse 'shop': build it, serve it, ask it.", no_args_is_help=True)
console = Console(stderr=True)
# what the library leaves unset and the demo fills in (an explicit env var or cubesage.toml still wins)
DEMO_SETTINGS = {
    "CUBESAGE_MODEL_DIR": "model",
    "CUBESAGE_DETAIL_VOCABULARY": "detail_vocabulary.yaml",
    "CUBESAGE_GLOSSARY": "glossary.yaml",
}


def use_demo_settings() -> None:
    """Point the model, detail vocabulary and glossary settings at ``demo/`` unless configured, and resolve
    relative dates ("this month") against the demo data's last day, the pack's ``today``."""
    for var, name in DEMO_SETTINGS.items():
        os.environ.setdefault(var, str(REPO_ROOT / "demo" / name))
    today = get_pack("demo").today
    if today is not None:
        os.environ.setdefault("CUBESAGE_TODAY", today.isoformat())
    get_settings.cache_clear()


@app.callback()
def _demo() -> None:
    use_demo_settings()


DEMO_ROWS = 12


def _build(settings: Settings, scale: float, reload_warehouse: bool) -> str:
    from demo.build import STEPS, prepare_demo  # loaded when a demo command runs, not when the CLI starts

    started = time.monotonic()
    url = db.database_url(settings)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=console,
    ) as progress:
        task = progress.add_task("building the demo", total=len(STEPS))
        report = prepare_demo(
            settings,
            url,
            scale=scale,
            reload_warehouse=reload_warehouse,
            on_step=lambda name: progress.update(task, advance=1, description=f"built {name}"),
        )
    for name, seconds in report.timings_s.items():
        console.print(f"  {name}: {seconds:.1f}s")
    console.print(f"[green]demo ready[/green] in {time.monotonic() - started:.1f}s")
    return url


@app.command()
def load(
    scale: float = typer.Option(1.0, min=0.01, max=20.0, help="1.0 = the full demo (see demo/pack.yaml)."),
) -> None:
    """(Re)generate the demo warehouse, then build semantic assets, glossary, few-shots and SAG indices."""
    _build(get_settings(), scale, reload_warehouse=True)


@app.command()
def run(
    port: int = typer.Option(None, "--port", help="API port (default: settings.api_port)."),
    scale: float = typer.Option(1.0, min=0.01, max=20.0, help="Warehouse scale when it must be generated."),
    exit_after_answers: bool = typer.Option(False, help="Stop after answering the sample questions."),
) -> None:
    """Embedded stack + demo + API and chat page, then answer the pack's sample questions on the console."""
    import uvicorn

    from answer.api import create_app

    logging.getLogger("httpx").setLevel(logging.WARNING)
    settings = get_settings()
    if port is not None:
        settings = settings.model_copy(update={"api_port": port})
    url = _build(settings, scale, reload_warehouse=False)
    try:
        api_url = db.api_url(settings, url)  # the API's own role, as `cubesage serve`
    except db.DatabaseSetupError as e:
        raise fail(e) from e
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(settings, database_url=api_url),
            host=settings.api_host,
            port=settings.api_port,
            log_level="warning",
            proxy_headers=False,
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    base = f"http://{settings.api_host}:{settings.api_port}"
    _wait_ready(base)
    answered, questions = 0, get_pack("demo").questions  # demo/pack.yaml
    with httpx.Client(base_url=base, timeout=60) as client:
        for question in questions:
            resp = client.post("/v1/ask", json={"question": question})
            if resp.status_code != 200:
                console.print(f"[red]{question}: HTTP {resp.status_code} {resp.text[:300]}[/red]")
                continue
            body = resp.json()
            answered += 1
            console.rule(f"[bold]{question}")
            console.print(body.get("text", ""))
            shown, note = rich_table(body.get("table") or {}, max_rows=DEMO_ROWS)
            console.print(shown)
            if note:
                console.print(note)
    console.print(f"[green]answered {answered} questions[/green]; chat page and API at {base}/ (OpenAPI {base}/schema)")
    if exit_after_answers:
        server.should_exit = True
        thread.join(10)
        raise typer.Exit(0 if answered == len(questions) else 1)
    console.print("serving; press Ctrl-C to stop")
    try:
        thread.join()
    except KeyboardInterrupt:
        server.should_exit = True
        thread.join(10)


def _wait_ready(base: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    console.print(f"[red]the API did not start on {base}[/red]")
    raise typer.Exit(1)
