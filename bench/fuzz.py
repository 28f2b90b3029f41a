"""``cubesage bench fuzz``: schemathesis against the API's OpenAPI schema (/schema/openapi.json).

Starts ``cubesage serve`` on loopback (rate limit off) unless ``--url`` is given and runs
``schemathesis run`` with the checks: no 5xx, responses match the documented schema,
status codes and content types documented. The ingest routes change the knowledge base,
so they are left out unless ``--include-ingest`` (model uploads then go to a scratch copy of
the model folder; wiki pages and terms do land in the configured database). Prints one JSON line summary.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from contextlib import nullcontext
from pathlib import Path

CHECKS = "not_a_server_error,response_schema_conformance,content_type_conformance,status_code_conformance"


def run(*, url: str | None, max_examples: int, include_ingest: bool, api_key: str | None, seed: int,
        mode: str = "all") -> int:
    with tempfile.TemporaryDirectory() as tmp:
        return _run(url, Path(tmp), max_examples=max_examples, include_ingest=include_ingest, api_key=api_key,
                    seed=seed, mode=mode)


def _run(url: str | None, tmp: Path, *, max_examples: int, include_ingest: bool, api_key: str | None,
         seed: int, mode: str) -> int:
    from bench._api_server import api_server
    from cubesage_core.settings import get_settings

    # fuzzed model uploads land in a scratch copy of the model folder, never in the real one
    scratch_models = tmp / "model"
    shutil.copytree(get_settings().model_folder(), scratch_models)
    env = {"CUBESAGE_API_RATE_LIMIT_PER_MIN": "0", "CUBESAGE_MODEL_DIR": str(scratch_models)}
    server = nullcontext(None) if url else api_server(env)
    with server as running:
        base = url or running.url
        report = tmp / "report.json"
        cmd = [str(Path(sys.executable).with_name("schemathesis")), "run", f"{base}/schema/openapi.json",
               "--checks", CHECKS, "--max-examples", str(max_examples), "--seed", str(seed), "--mode", mode,
               "--no-color", "--suppress-health-check", "all", "--workers", "2", "--request-timeout", "60",
               "--report", "json", "--report-json-path", str(report), "--generation-database", "none"]
        if not include_ingest:
            cmd += ["--exclude-path-regex", "^/v1/ingest/"]
        if api_key:
            cmd += ["--header", f"Authorization: Bearer {api_key}"]
        proc = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False)
        if not report.exists():
            print(json.dumps({"bench": "api-fuzz", "ok": False, "error": proc.stdout[-2000:] + proc.stderr[-2000:]}))
            return 1
        data = json.loads(report.read_text())
    failures = data.get("failures") or []
    summary = {
        "bench": "api-fuzz", "ok": data.get("exit_code") == 0, "schemathesis": data.get("schemathesis_version"),
        "checks": CHECKS.split(","), "operations_tested": data["operations"]["tested"],
        "test_cases": data["test_cases"]["generated"],
        "failures": data["test_cases"]["unique_failures"], "errors": data["test_cases"]["errored"],
        "failure_examples": [json.dumps(f, default=str)[:400] for f in failures[:5]],
        "running_time_s": round(data.get("running_time", 0.0), 1), "ingest_included": include_ingest,
        "seed": seed, "mode": mode,
    }
    print(json.dumps(summary, ensure_ascii=False), flush=True)
    return 0 if summary["ok"] else 1
