"""``cubesage serve``: run the HTTP API and the chat page with uvicorn."""

from __future__ import annotations

import typer
from rich.console import Console

from cubesage_core.settings import get_settings

err = Console(stderr=True)


def serve(
    host: str = typer.Option(None, "--host", help="Bind address (default: settings.api_host, 127.0.0.1)."),
    port: int = typer.Option(None, "--port", help="Port (default: settings.api_port, 8088)."),
    log_level: str = typer.Option("warning", "--log-level", help="uvicorn log level."),
) -> None:
    """Serve the API (/v1/..., OpenAPI at /schema) and the chat page (/)."""
    import uvicorn

    from answer.api import create_app
    from answer.api.security import keys_required
    from cubesage_core.cli import SETUP_ERRORS, bootstrap_or_exit, fail
    from cubesage_core.db import api_url

    settings = get_settings()
    updates = {k: v for k, v in (("api_host", host), ("api_port", port)) if v is not None}
    settings = settings.model_copy(update=updates)
    admin_url = bootstrap_or_exit(settings)
    try:
        url = api_url(settings, admin_url)  # the API's own role: no superuser rights
        app = create_app(settings, database_url=url)  # a model the warehouse cannot serve stops here
    except SETUP_ERRORS as e:
        raise fail(e) from e
    from answer.keys import list_keys

    required = keys_required(settings)
    keys = "required" if required else "not required (loopback demo mode)"
    err.print(f"cubesage API on http://{settings.api_host}:{settings.api_port}/  (API keys {keys})")
    if required and not list_keys(admin_url):
        err.print("[yellow]no active API key: create one with 'cubesage keys create --name NAME'[/yellow]")
    # client addresses come from the socket; X-Forwarded-For counts only from api_trusted_proxies (the guard)
    uvicorn.run(
        app,
        host=settings.api_host,
        port=settings.api_port,
        log_level=log_level,
        timeout_graceful_shutdown=5,
        proxy_headers=False,
    )
