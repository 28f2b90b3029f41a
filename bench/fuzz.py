"""``cubesage bench fuzz``: schemathesis against the API's OpenAPI schema, then the adversarial cases.

Starts ``cubesage serve`` on loopback (rate limit and answer cache off; model uploads go to a scratch
copy of the model folder) unless ``--url`` is given, creates short-lived API keys (ask, ingest) and prints
two JSON lines, each with the counts attempted / 2xx / 4xx / 5xx / leaked:

1. ``schemathesis``: ``schemathesis run`` with the checks no 5xx, responses match the documented schema,
   status codes and content types documented (counts from its HAR report). The ingest routes change the
   knowledge base, so they are left out unless ``--include-ingest`` (wiki pages and terms then do land in
   the configured database);
2. ``adversarial`` (:mod:`bench.adversarial`): malformed and hostile requests, each expected to get a 4xx,
   plus write requests (refused), unreviewed feedback (never applied), ``modified`` (what changed in the
   knowledge base or warehouse) and ``recovered`` (the API still ready and answering afterwards).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx

CHECKS = "not_a_server_error,response_schema_conformance,content_type_conformance,status_code_conformance"


def run(
    *,
    url: str | None,
    max_examples: int,
    include_ingest: bool,
    api_key: str | None,
    seed: int,
    mode: str = "all",
    schemathesis: bool = True,
    adversarial: bool = True,
) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        return _run(
            url,
            Path(tmp),
            max_examples=max_examples,
            include_ingest=include_ingest,
            api_key=api_key,
            seed=seed,
            mode=mode,
            schemathesis=schemathesis,
            adversarial=adversarial,
        )


def _run(
    url: str | None,
    tmp: Path,
    *,
    max_examples: int,
    include_ingest: bool,
    api_key: str | None,
    seed: int,
    mode: str,
    schemathesis: bool,
    adversarial: bool,
) -> int:
    from answer import keys
    from bench._api_server import api_at
    from cubesage_core import db
    from cubesage_core.settings import get_settings

    settings = get_settings()
    scratch_models = tmp / "model"  # fuzzed model uploads land here, never in the real folder
    shutil.copytree(settings.model_folder(), scratch_models)
    admin_url = db.bootstrap(settings)
    ask_key, ask_token = keys.create_key(admin_url, f"bench-fuzz-ask-{tmp.name[-8:]}", ["ask"])
    ingest_key, ingest_token = keys.create_key(admin_url, f"bench-fuzz-ingest-{tmp.name[-8:]}", ["ask", "ingest"])
    env = {
        "CUBESAGE_API_RATE_LIMIT_PER_MIN": "0",
        "CUBESAGE_MODEL_DIR": str(scratch_models),
        "CUBESAGE_API_ANSWER_CACHE_TTL_S": "0",
    }
    lines: list[dict[str, Any]] = []
    try:
        with api_at(url, env) as base:
            if schemathesis:
                token = api_key or (ingest_token if include_ingest else None)
                lines.append(
                    _schemathesis(
                        base,
                        tmp,
                        max_examples=max_examples,
                        include_ingest=include_ingest,
                        token=token,
                        seed=seed,
                        mode=mode,
                    )
                )
            if adversarial:
                lines.append(
                    _adversarial(base, admin_url, scratch_models, settings.warehouse_schemas, ask_token, ingest_token)
                )
    finally:
        keys.revoke_key(admin_url, ask_key.key_id)
        keys.revoke_key(admin_url, ingest_key.key_id)
    for line in lines:
        print(json.dumps(line, ensure_ascii=False), flush=True)
    return 0 if all(line.get("ok") for line in lines) else 1


def _har_counts(path: Path) -> dict[str, int]:
    from bench.adversarial import leaked

    counts = {"attempted": 0, "2xx": 0, "4xx": 0, "5xx": 0, "leaked": 0}
    if not path.exists():
        return counts
    for entry in json.loads(path.read_text()).get("log", {}).get("entries", []):
        status = int(entry.get("response", {}).get("status") or 0)
        counts["attempted"] += 1
        counts["5xx" if status >= 500 else "4xx" if status >= 400 else "2xx"] += 1
        counts["leaked"] += leaked(str(entry.get("response", {}).get("content", {}).get("text") or ""))
    return counts


def _schemathesis(
    base: str, tmp: Path, *, max_examples: int, include_ingest: bool, token: str | None, seed: int, mode: str
) -> dict[str, Any]:
    report, har = tmp / "report.json", tmp / "report.har"
    cmd = _schemathesis_command(base, report, har, max_examples=max_examples, seed=seed, mode=mode)
    if not include_ingest:
        cmd += ["--exclude-path-regex", "^/v1/ingest/"]
    if token:
        cmd += ["--header", f"Authorization: Bearer {token}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False)
    if not report.exists():
        return {
            "bench": "api-fuzz",
            "suite": "schemathesis",
            "ok": False,
            "error": proc.stdout[-2000:] + proc.stderr[-2000:],
        }
    data = json.loads(report.read_text())
    counts = _har_counts(har)
    return {
        "bench": "api-fuzz",
        "suite": "schemathesis",
        "ok": data.get("exit_code") == 0 and counts["5xx"] == 0,
        **counts,
        "schemathesis": data.get("schemathesis_version"),
        "checks": CHECKS.split(","),
        "operations_tested": data["operations"]["tested"],
        "test_cases": data["test_cases"]["generated"],
        "failures": data["test_cases"]["unique_failures"],
        "errors": data["test_cases"]["errored"],
        "exit_code": data.get("exit_code"),
        "runtime_errors": data.get("errors") or [],
        "failure_examples": [json.dumps(f, default=str)[:400] for f in (data.get("failures") or [])[:5]],
        "running_time_s": round(data.get("running_time", 0.0), 1),
        "ingest_included": include_ingest,
        "seed": seed,
        "mode": mode,
    }


def _schemathesis_command(base: str, report: Path, har: Path, *, max_examples: int, seed: int, mode: str) -> list[str]:
    """``schemathesis run`` over the API's OpenAPI schema, reports written as JSON and HAR."""
    # one worker: CPython 3.11's ast.parse is not thread-safe ("AST constructor recursion depth mismatch" inside
    # schemathesis' coverage phase with two workers)
    return [
        str(Path(sys.executable).with_name("schemathesis")),
        "run",
        f"{base}/schema/openapi.json",
        "--checks",
        CHECKS,
        "--max-examples",
        str(max_examples),
        "--seed",
        str(seed),
        "--mode",
        mode,
        "--no-color",
        "--suppress-health-check",
        "all",
        "--workers",
        "1",
        "--request-timeout",
        "60",
        "--report",
        "json,har",
        "--report-json-path",
        str(report),
        "--report-har-path",
        str(har),
        "--generation-database",
        "none",
    ]


def _probes() -> list[str]:
    from bench.load import load_mix

    cases, _, _ = load_mix(None)
    aggregate = [c["question"] for c in cases if (c.get("expect") or {}).get("intent") == "aggregate"]
    return aggregate[:9]


def _adversarial(
    base: str, admin_url: str, model_dir: Path, schemas: list[str], ask_token: str, ingest_token: str
) -> dict[str, Any]:
    from bench import adversarial as adv
    from bench._state import changed, fingerprint
    from cubesage_core import db

    def approved() -> int:
        with db.connection(admin_url) as conn:
            return int(
                db.one(conn.execute("SELECT count(*) FROM semlayer.dynamic_few_shot_cache WHERE approved").fetchone())[
                    0
                ]
            )

    before = fingerprint(admin_url, model_dir, schemas)
    with httpx.Client(base_url=base, timeout=120) as client:
        query_id = client.post("/v1/ask", json={"question": _probes()[0]}).json()["query_id"]
        cases = [
            *adv.body_cases(query_id, ingest_token),
            *adv.origin_cases(),
            *adv.ingest_cases(ingest_token),
            *adv.correction_cases(query_id),
        ]
        counts = adv.run_cases(client, cases)
        writes = adv.refused_writes(client)
        feedback = adv.unreviewed_feedback(client, _probes(), approved)
        auth = adv.run_cases(client, adv.auth_cases(ask_token))  # last: a failed-auth flood blocks this address
        recovered = (
            client.get("/readyz").status_code == 200
            and client.post("/v1/ask", json={"question": _probes()[0]}).status_code == 200
        )
    modified = changed(before, fingerprint(admin_url, model_dir, schemas))
    totals = {k: counts[k] + auth[k] for k in ("attempted", "2xx", "4xx", "5xx", "leaked")}
    ok = (
        totals["5xx"] == totals["leaked"] == totals["2xx"] == 0
        and not modified
        and recovered
        and writes["write_requests_refused"] == writes["write_requests"]
        and feedback["unreviewed_feedback_applied"] == 0
    )
    return {
        "bench": "api-fuzz",
        "suite": "adversarial",
        "ok": ok,
        **totals,
        "modified": len(modified),
        "modified_parts": modified,
        "recovered": recovered,
        **writes,
        **feedback,
        "unexpected": (counts["unexpected"] + auth["unexpected"])[:10],
    }
