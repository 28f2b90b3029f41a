"""Start a real Cube server (npm ``@cubejs-backend/server@0.33.65``) for tests and benchmarks.

Installs the pinned npm packages with ``npm ci --ignore-scripts`` on first use, then
runs ``cubejs-server`` in production mode against a PostgreSQL URL and a model folder.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
SECRET = "cubesage-test-secret-0123456789abcdef"


def ensure_installed() -> None:
    marker = HERE / "node_modules" / ".package-lock.json"
    if marker.exists() and marker.stat().st_mtime >= (HERE / "package-lock.json").stat().st_mtime:
        return
    subprocess.run(
        ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=HERE,
        check=True,
        stdin=subprocess.DEVNULL,
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class CubeServer:
    url: str
    secret: str
    process: subprocess.Popen
    log_path: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(5)

    def __enter__(self) -> CubeServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_cube(pg_url: str, model_dir: Path, workdir: Path, port: int | None = None, timeout: float = 90) -> CubeServer:
    """Start Cube on a free port (or ``port``); returns once ``/readyz`` answers 200."""
    ensure_installed()
    parts = urlsplit(pg_url)
    port = port or _free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    model_link = workdir / "model"
    if model_link.is_symlink() or model_link.exists():
        model_link.unlink()
    model_link.symlink_to(Path(model_dir).resolve(), target_is_directory=True)
    env = {
        **os.environ,
        "NODE_ENV": "production",
        "PORT": str(port),
        "CUBEJS_DEV_MODE": "false",
        "CUBEJS_SCHEMA_PATH": "model",
        "CUBEJS_CACHE_AND_QUEUE_DRIVER": "memory",
        "CUBEJS_API_SECRET": SECRET,
        "CUBEJS_DB_TYPE": "postgres",
        "CUBEJS_DB_HOST": parts.hostname or "127.0.0.1",
        "CUBEJS_DB_PORT": str(parts.port or 5432),
        "CUBEJS_DB_NAME": (parts.path or "/postgres").lstrip("/") or "postgres",
        "CUBEJS_DB_USER": parts.username or "postgres",
        "CUBEJS_DB_PASS": parts.password or "",
        "CUBEJS_TELEMETRY": "false",
        "CUBEJS_LOG_LEVEL": "warn",
        "CUBEJS_SCHEDULED_REFRESH_DEFAULT": "false",
        # the API instance builds the models' rollups on first use, in PostgreSQL (no Cube Store here)
        "CUBEJS_PRE_AGGREGATIONS_BUILDER": "true",
        "CUBEJS_EXTERNAL_DEFAULT": "false",
    }
    log_path = workdir / "cube.log"
    log = log_path.open("wb")
    proc = subprocess.Popen(
        ["node", str(HERE / "node_modules" / "@cubejs-backend" / "server" / "bin" / "server")],
        cwd=workdir,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"Cube exited with {proc.returncode}:\n{log_path.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/readyz", timeout=2) as resp:
                if resp.status == 200:
                    return CubeServer(url=url, secret=SECRET, process=proc, log_path=log_path)
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)
    proc.kill()
    raise RuntimeError(f"Cube did not become ready in {timeout}s:\n{log_path.read_text()[-3000:]}")
