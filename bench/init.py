"""Time from ``cubesage init`` to the first answer on a fresh database holding TPC-H SF 0.1 (target < 60 s).

A new database is created on the configured PostgreSQL server (else the embedded one) and TPC-H is loaded
into schema ``tpch`` by ``warehouses/tpch/load.py`` (timed apart: the data is the user's). Then the two
commands a new user runs are timed as processes, in an empty folder and with none of the demo's settings:
``cubesage init --database-url URL --schema tpch`` (models drafted from the catalog, nothing else given) and
``cubesage ask "<the question init prints>" --json``. Each step line of init is stamped as it arrives.
One JSON line: load, init and ask seconds, the steps, the total (init + ask) against the target, the answer's
intent and row count, and the machine's load average (2 shared cores). The database is dropped afterwards.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cubesage_core.scratch import temporary_database

TARGET_S = 60.0
SCHEMA = "tpch"
# settings that would point the commands at another warehouse's files (`make bench` exports the demo's)
# (and the server's URL: the fresh database reaches the commands through --database-url and cubesage.toml)
_FOREIGN = (
    "CUBESAGE_MODEL_DIR",
    "CUBESAGE_GLOSSARY",
    "CUBESAGE_DETAIL_VOCABULARY",
    "CUBESAGE_WIKI_DIR",
    "CUBESAGE_TODAY",
    "CUBESAGE_WAREHOUSE_SCHEMAS",
    "CUBESAGE_WAREHOUSE_SCHEMA",
    "CUBESAGE_CONFIG",
    "CUBESAGE_DATABASE_URL",
)
_STEP = re.compile(r"^✓ ([^:]+):")
_NEXT = re.compile(r'cubesage ask "(.+)"')


def _cubesage() -> list[str]:
    script = Path(sys.executable).with_name("cubesage")
    if script.is_file():
        return [str(script)]
    found = shutil.which("cubesage")
    return [found] if found else [sys.executable, "-c", "from answer.cli import main; main()"]


@contextmanager
def _fresh_database(admin_url: str, keep: bool) -> Iterator[str]:
    with temporary_database(admin_url, "cubesage_bench_init", setup="none", keep=keep) as url:
        yield url


def _env(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _FOREIGN}
    env.update({"CUBESAGE_CONFIG": str(folder / "cubesage.toml"), "COLUMNS": "200", "NO_COLOR": "1"})
    return env


def _timed_init(url: str, folder: Path) -> tuple[float, dict[str, float], str]:
    """Run ``cubesage init``; (seconds, seconds per step as its line arrived, all output)."""
    argv = [
        *_cubesage(),
        "init",
        "--database-url",
        url,
        "--schema",
        SCHEMA,
        "--models",
        str(folder / "model"),
        "--config",
        str(folder / "cubesage.toml"),
    ]
    started = last = time.monotonic()
    steps: dict[str, float] = {}
    lines: list[str] = []
    with subprocess.Popen(
        argv,
        cwd=folder,
        env=_env(folder),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        encoding="utf-8",
    ) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if m := _STEP.match(line.strip()):
                now = time.monotonic()
                steps[m.group(1)] = round(now - last, 2)
                last = now
        code = proc.wait()
    output = "".join(lines)
    if code != 0:
        raise RuntimeError(f"cubesage init failed ({code}):\n{output}")
    return time.monotonic() - started, steps, output


def _timed_ask(question: str, folder: Path) -> tuple[float, dict[str, Any]]:
    started = time.monotonic()
    done = subprocess.run(
        [*_cubesage(), "ask", question, "--json"],
        cwd=folder,
        env=_env(folder),
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
    )
    seconds = time.monotonic() - started
    if done.returncode != 0:
        raise RuntimeError(f"cubesage ask failed ({done.returncode}):\n{done.stderr}")
    return seconds, json.loads(done.stdout)


def run(database_url: str | None = None, keep_database: bool = False) -> dict[str, Any]:
    from cubesage_core import db
    from cubesage_core.settings import get_settings
    from warehouses.tpch.load import SCALE_FACTOR
    from warehouses.tpch.load import load as load_tpch

    admin_url = database_url or db.database_url(get_settings())
    with _fresh_database(admin_url, keep_database) as url, tempfile.TemporaryDirectory(prefix="bench-init-") as tmp:
        folder = Path(tmp)
        started = time.monotonic()
        counts = load_tpch(url, SCHEMA)
        load_s = time.monotonic() - started
        init_s, steps, output = _timed_init(url, folder)
        question = m.group(1) if (m := _NEXT.search(output)) else "How many rows are there?"
        ask_s, answer = _timed_ask(question, folder)
    total = init_s + ask_s
    table = answer.get("table") or {}
    line = {
        "bench": "init",
        "warehouse": "tpch",
        "scale_factor": SCALE_FACTOR,
        "rows": sum(counts.values()),
        "load_s": round(load_s, 2),
        "init_s": round(init_s, 2),
        "steps_s": steps,
        "question": question,
        "first_answer_s": round(ask_s, 2),
        "total_s": round(total, 2),
        "target_s": TARGET_S,
        "met": total < TARGET_S,
        "intent": answer.get("intent"),
        "answer_rows": len(table.get("rows") or []),
        "text": answer.get("text"),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    print(json.dumps(line, ensure_ascii=False), flush=True)
    return line
