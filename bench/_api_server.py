"""Start ``cubesage serve`` as a child process on a free loopback port for the API benchmarks."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO

import httpx


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class RunningApi:
    url: str
    pid: int


@contextmanager
def api_at(url: str | None, env: dict[str, str] | None = None) -> Iterator[str]:
    """``url`` when one is given, else the URL of an API started for the block (:func:`api_server`)."""
    if url:
        yield url
        return
    with api_server(env) as running:
        yield running.url


@contextmanager
def api_server(
    env: dict[str, str] | None = None, timeout_s: float = 180.0, ready_path: str = "/healthz"
) -> Iterator[RunningApi]:
    """``cubesage serve --host 127.0.0.1 --port N`` with ``env`` added, yielded once ``ready_path`` answers 200;
    stopped (SIGTERM) on exit."""
    port = _free_port()
    cmd = [
        sys.executable,
        "-c",
        "from answer.cli import main; main()",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    with tempfile.TemporaryFile(mode="w+") as log:
        proc = subprocess.Popen(
            cmd,
            env={**os.environ, **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            text=True,
        )
        try:
            _wait_healthy(proc, f"http://127.0.0.1:{port}", log, timeout_s, ready_path)
            yield RunningApi(url=f"http://127.0.0.1:{port}", pid=proc.pid)
        finally:
            proc.terminate()
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)


def _wait_healthy(proc: subprocess.Popen, url: str, log: IO[str], timeout_s: float, path: str = "/healthz") -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        if proc.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"cubesage serve exited with {proc.returncode}: {log.read()[-2000:]}")
        try:
            if httpx.get(url + path, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError("cubesage serve did not become healthy in time")
        time.sleep(0.3)
