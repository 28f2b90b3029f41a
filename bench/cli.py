"""``cubesage bench ...``: each benchmark prints JSON lines on stdout."""

from __future__ import annotations

from pathlib import Path

import typer

app = typer.Typer(help="Benchmarks (JSON lines on stdout).", no_args_is_help=True)


@app.command()
def multihop(
    questions: Path = typer.Option(..., exists=True, dir_okay=False, help="HotpotQA- or MuSiQue-style questions JSON."),
    corpus: Path = typer.Option(
        ..., exists=True, dir_okay=False, help="Corpus: {title: list of sentences} or a list of {title, text}."
    ),
    backend: str | None = typer.Option(None, help="postgres | elasticsearch (default: the configured store)."),
    es_url: str | None = typer.Option(None, help="Elasticsearch URL (default: settings; else one is started)."),
) -> None:
    """Multi-hop passage Recall@2/5/10, indexing throughput and query latency: SAG vs BM25/dense/RRF."""
    from bench.multihop import run

    run(questions, corpus, backend=backend, es_url=es_url)


@app.command()
def load(
    url: str | None = typer.Option(None, help="A running API (default: start `cubesage serve` on loopback)."),
    suite: Path | None = typer.Option(
        None, exists=True, dir_okay=False, help="Question mix (default: demo/regress/suite.yaml, else a built-in list)."
    ),
    requests: int = typer.Option(2000, min=1, help="Number of /v1/ask requests."),
    concurrency: int = typer.Option(32, min=1, max=256, help="Concurrent clients."),
    api_key: str | None = typer.Option(None, envvar="CUBESAGE_BENCH_API_KEY", help="Bearer token if keys are on."),
    answer_cache: bool = typer.Option(
        True, help="Keep the API's answer cache on (--no-answer-cache: every request runs the pipeline)."
    ),
    memo: bool = typer.Option(
        True,
        help="Keep the warehouse result cache and the SAG search memo on (both "
        "follow refresh keys); --no-memo: every request queries the "
        "warehouse and the SAG index.",
    ),
) -> None:
    """/v1/ask throughput and p50/p95/p99 under load, answers checked against serial ones; nl2cube p50; RSS."""
    from bench.load import run

    run(
        url=url,
        suite=suite,
        requests=requests,
        concurrency=concurrency,
        api_key=api_key,
        answer_cache=answer_cache,
        memo=memo,
    )


@app.command()
def fuzz(
    url: str | None = typer.Option(None, help="A running API (default: start `cubesage serve` on loopback)."),
    max_examples: int = typer.Option(30, min=1, help="Test cases per operation and phase."),
    include_ingest: bool = typer.Option(False, help="Also fuzz /v1/ingest/* (changes the knowledge base)."),
    api_key: str | None = typer.Option(None, envvar="CUBESAGE_BENCH_API_KEY", help="Bearer token if keys are on."),
    seed: int = typer.Option(7, help="schemathesis seed."),
    mode: str = typer.Option("all", help="positive (valid inputs: reach the pipeline) | negative | all."),
    schemathesis: bool = typer.Option(True, help="Run schemathesis (--no-schemathesis: the adversarial cases only)."),
    adversarial: bool = typer.Option(True, help="Run the adversarial cases (bench/adversarial.py)."),
) -> None:
    """schemathesis against /schema, then hostile and malformed requests: attempted / 2xx / 4xx / 5xx / leaked /
    modified / recovered (JSON lines)."""
    from bench.fuzz import run

    raise typer.Exit(
        run(
            url=url,
            max_examples=max_examples,
            include_ingest=include_ingest,
            api_key=api_key,
            seed=seed,
            mode=mode,
            schemathesis=schemathesis,
            adversarial=adversarial,
        )
    )


@app.command()
def faults(
    requests: int = typer.Option(300, min=10, help="Number of /v1/ask requests."),
    concurrency: int = typer.Option(16, min=1, max=128, help="Concurrent clients."),
    resets: int = typer.Option(2, min=1, max=10, help="Connection resets (pg_terminate_backend), evenly spaced."),
    within_s: float = typer.Option(5.0, help="Recovery bound reported as 'recovered'."),
) -> None:
    """Terminate the API's database backends mid-load: recovery time, 5xx after it (JSON lines)."""
    from bench.faults import run

    raise typer.Exit(run(requests=requests, concurrency=concurrency, resets=resets, within_s=within_s))


@app.command()
def e2e(
    suite: Path | None = typer.Option(
        None, exists=True, dir_okay=False, help="Questions (default: demo/regress/suite.yaml)."
    ),
    rounds: int = typer.Option(2, min=1, help="Passes over the questions after warm-up."),
) -> None:
    """In-process Cubesage.ask latency, warm: p50/p95 overall and per intent, plus startup time."""
    from bench.e2e import run

    run(suite, rounds)


@app.command()
def llm(
    suite: Path | None = typer.Option(
        None, exists=True, dir_okay=False, help="Suite (default: demo/regress/suite.yaml, its dev split replayed)."
    ),
    split: str = typer.Option("dev", help="The split the replay records were made for."),
    delay_ms: list[int] = typer.Option([300], "--delay-ms", min=0, help="Stub delay per LLM call (repeatable)."),
) -> None:
    """LLM mode on the replay stub: calls and tokens per question by intent, latency per call delay."""
    from bench.llm import run

    run(suite, split, tuple(delay_ms))


@app.command()
def scale(
    scales: list[float] = typer.Option(
        [1.0, 10.0], "--scale", min=0.01, max=20.0, help="Demo warehouse scales (repeat; the first is the base)."
    ),
    root: Path = typer.Option(Path(".cubesage/bench-scale"), help="Parent of one data dir per scale."),
    requests: int = typer.Option(400, min=1, help="/v1/ask requests of the load run, per scale."),
    concurrency: int = typer.Option(16, min=1, max=256, help="Concurrent clients of the load run."),
    suite: Path | None = typer.Option(
        None, exists=True, dir_okay=False, help="Questions with gold (default: demo/regress/suite.yaml)."
    ),
    skip_build: bool = typer.Option(False, help="Keep the data dirs as built before (no build line timings)."),
    rounds: int = typer.Option(2, min=1, help="Turns of the load run across the scales (interleaved)."),
) -> None:
    """The demo at each scale: build, start-up, serial suite pass (judged), pipeline-only load; then the
    bigger scale against the first with the scale targets (JSON lines)."""
    from bench.scale import run

    run(
        scales=list(scales),
        root=root.resolve(),
        requests=requests,
        concurrency=concurrency,
        suite_path=suite,
        skip_build=skip_build,
        rounds=rounds,
    )


@app.command("compile")
def compile_bench(
    database_url: str | None = typer.Option(
        None, help="Warehouse URL (default: start an embedded PostgreSQL and load the demo warehouse)."
    ),
    cube_url: str | None = typer.Option(None, help="Cube server URL (default: start one over demo/model)."),
    cube_secret: str | None = typer.Option(None, envvar="CUBESAGE_CUBE_SECRET", help="Cube HS256 JWT secret."),
    compile_rounds: int = typer.Option(50, min=1, help="Compilations per parity query."),
    exec_rounds: int = typer.Option(3, min=1, help="Executions per query and backend."),
    scale: float = typer.Option(1.0, min=0.01, help="Demo warehouse scale when one is started."),
) -> None:
    """Built-in compiler: compile p50/p95 over the parity queries; execution builtin vs Cube side by side."""
    from bench.compile import run

    run(
        database_url=database_url,
        cube_url=cube_url,
        cube_secret=cube_secret,
        compile_rounds=compile_rounds,
        exec_rounds=exec_rounds,
        scale=scale,
    )


@app.command("schema-linking")
def schema_linking(
    data: Path = typer.Option(
        ...,
        "--data",
        exists=True,
        file_okay=False,
        help="Spider/BIRD-style dir: tables.json + questions (dev.json ...).",
    ),
    limit: int | None = typer.Option(None, min=1, help="Only the first N questions."),
    url: str | None = typer.Option(
        None,
        help="PostgreSQL admin URL; the bench creates cubesage_bench_<dir> "
        "there (default: the configured/embedded server).",
    ),
    demo_url: str | None = typer.Option(
        None, help="Database with the demo semantic layer for the latency line (default: the configured/embedded one)."
    ),
    rounds: int = typer.Option(5, min=1, help="Latency rounds over the demo questions."),
    skip_latency: bool = typer.Option(False, help="Do not measure retrieval latency on the demo warehouse."),
) -> None:
    """Table retrieval Recall@1/3/5/10 and All@5/10, per-database and union: cubesage four-engine vs
    BM25, dense and RRF (no LLM); then the retrieval latency of one question on the demo warehouse."""
    from bench.schema_linking import cli_run

    raise typer.Exit(cli_run(data, url=url, demo_url=demo_url, limit=limit, rounds=rounds, skip_latency=skip_latency))


@app.command()
def engines(
    suite: Path | None = typer.Option(
        None, exists=True, dir_okay=False, help="Questions with dev/test splits (default: demo/regress/suite.yaml)."
    ),
) -> None:
    """Per split: the share of questions each engine (R/V/D/G/W) contributes a context asset to, and the CRAG
    grades and decisions, with the seed's and the calibrated thresholds (JSON lines)."""
    from bench.engines import run

    run(suite)


@app.command("router-fast")
def router_fast(
    suite: Path | None = typer.Option(
        None, exists=True, dir_okay=False, help="Questions (default: demo/regress/suite.yaml)."
    ),
    repeat: int = typer.Option(20, min=1, help="Runs per question."),
) -> None:
    """Fast-mode latency of understanding, intent, decomposition and Cube query building (no DB, no LLM)."""
    from bench.router_fast import run

    run(suite, repeat=repeat)


@app.command("init")
def init_bench(
    database_url: str | None = typer.Option(
        None,
        help="PostgreSQL admin URL; the bench creates and drops a database "
        "there (default: the configured/embedded server).",
    ),
    keep_database: bool = typer.Option(False, help="Keep the bench database (cubesage_bench_init_*) afterwards."),
) -> None:
    """Time from `cubesage init` to the first answer on a fresh database holding TPC-H SF 0.1, drafted models
    only (target under 60 s): one JSON line with the load, each init step and the first `cubesage ask`."""
    from bench.init import run

    run(database_url=database_url, keep_database=keep_database)
