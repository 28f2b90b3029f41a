"""``cubesage init``: from a database URL and warehouse schema(s) to an answering cubesage, idempotently.

The pipeline is ``STEPS``, a tuple of named steps run in order on one :class:`InitRun`; each returns
the line it reports. Used by ``cubesage init`` and ``cubesage warehouse load`` (after a pack's loader).
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import psycopg
from pydantic import SecretStr

from cubesage_core import db
from cubesage_core.settings import Settings, mask_url


@dataclass(frozen=True)
class InitConfig:
    """What the user gave (flags, env, cubesage.toml); ``database_url`` None = the embedded server."""

    database_url: str | None
    schemas: tuple[str, ...]
    model_dir: Path
    glossary: Path | None = None
    wiki_dir: Path | None = None
    few_shots: Path | None = None
    detail_vocabulary: Path | None = None
    today: date | None = None  # the day relative dates resolve against (a pack's fixed data)
    config_path: Path = Path("cubesage.toml")
    suite: Path | None = None  # a regression suite whose dev split calibrates the retrieval thresholds


@dataclass
class InitRun:
    config: InitConfig
    settings: Settings
    url: str = ""
    model: Any = None
    done: dict[str, str] = field(default_factory=dict)


def _check_database(run: InitRun) -> str:
    run.url = db.database_url(run.settings)
    try:
        with psycopg.connect(run.url, autocommit=True) as conn:  # no vector type to register yet
            version = db.one(conn.execute("SHOW server_version").fetchone())[0]
            vector = conn.execute(
                "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
            ).fetchone()
    except psycopg.OperationalError as err:
        raise db.DatabaseSetupError(f"cannot connect to PostgreSQL: {str(err).strip()}") from err
    if vector is None:
        raise db.DatabaseSetupError(
            "the pgvector extension is not installed on this server: install it, then "
            f"run as a superuser in this database: {db.PGVECTOR_STATEMENT}"
        )
    return f"PostgreSQL {version}, pgvector {vector[0]} available"


def _create_schemas(run: InitRun) -> str:
    db.apply_schema(run.url, run.config.schemas)
    with db.connection(run.url) as conn:
        tables = db.one(
            conn.execute(
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = ANY(%s)",
                (list(run.config.schemas),),
            ).fetchone()
        )[0]
    if not tables:
        where = "the embedded server" if run.config.database_url is None else "the database"
        raise db.DatabaseSetupError(
            f"no tables in schema(s) {', '.join(run.config.schemas)} of {where} "
            f"{mask_url(run.url)}: load your data there first or pass the right --schema"
        )
    return f"cubesage schemas ready; role {db.READER_ROLE} reads {tables} tables of {', '.join(run.config.schemas)}"


def _draft_models(run: InitRun) -> str:
    from cube_models.draft import draft_models
    from cube_models.model import model_files

    folder = run.config.model_dir
    if folder.is_dir() and model_files(folder):
        return f"kept the {len(model_files(folder))} model files of {folder}"
    with db.connection(run.url) as conn:
        reports = draft_models(conn, run.config.schemas, folder)
    guessed = sum(r.guessed_joins for r in reports)
    return (
        f"drafted {sum(r.cubes for r in reports)} cubes into {folder} ({guessed} joins guessed from column "
        "names: review them)"
    )


def _validate_models(run: InitRun) -> str:
    from cube_models.model import load_model

    run.model = load_model(run.config.model_dir)
    return f"{len(run.model.cubes)} cubes valid"


def _export_assets(run: InitRun) -> str:
    from cube_models.export import export_assets
    from cubesage_core.embeddings import get_embedder

    report = export_assets(run.url, run.model, embedder=get_embedder(run.settings.embedding_backend))
    return f"semantic assets: {report.inserted} new, {report.updated} updated, {report.unchanged} unchanged"


def _build_rollups(run: InitRun) -> str:
    from cube_models import rollups

    builds = rollups.refresh(run.url, run.model, tuple(run.settings.warehouse_schemas))
    if not builds:
        return "no pre-aggregations in the models"
    return "rollups: " + ", ".join(f"{b.rollup} {b.rows if b.built else 'fresh'}" for b in builds)


def _load_glossary(run: InitRun) -> str:
    if run.config.glossary is None:
        return "no glossary given (--glossary)"
    from fourengine.glossary import load_glossary

    report = load_glossary(run.url, run.config.glossary)
    return f"glossary: {report.terms} terms, {report.business_rules} business rules"


def _load_few_shots(run: InitRun) -> str:
    if run.config.few_shots is None:
        return "no few-shots given (--few-shots)"
    from fourengine.fewshot_cache import load_few_shots

    report = load_few_shots(run.url, run.config.few_shots)
    return f"few-shots: {json.dumps(report.__dict__, default=str)}"


def _calibrate(run: InitRun) -> str:
    from answer.bootstrap import calibrate_on_suite
    from cubesage_core.embeddings import get_embedder

    thresholds = calibrate_on_suite(run.url, run.config.suite, get_embedder(run.settings.embedding_backend))
    source = f" on the dev split of {run.config.suite.name}" if run.config.suite is not None else ""
    return f"retrieval thresholds{source}: " + ", ".join(f"{k} {v:.3f}" for k, v in thresholds.items())


def _index_warehouse(run: InitRun) -> str:
    from answer.bootstrap import warehouse_map_of
    from sag_index.backends import get_store
    from sag_index.warehouse import index_warehouse

    store = get_store(run.settings, run.url)
    try:
        report = index_warehouse(run.url, warehouse_map_of(run.url, run.settings), run.config.wiki_dir, store)
    finally:
        store.close()
    rows = ", ".join(f"{t} {n}" for t, n in report.row_counts.items()) or "no entity tables"
    return f"indexed {report.wiki.chunks_total} wiki sections and rows: {rows}"


def _write_config(run: InitRun) -> str:
    path = run.config.config_path
    values = tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    values.pop("warehouse_schema", None)
    values.update({k: v for k, v in config_values(run.config).items() if v is not None})
    if run.config.database_url is None:  # the embedded server: later commands must find the same data
        values["data_dir"] = str(run.settings.data_dir.resolve())
    path.write_text(
        "".join(f"{k} = {json.dumps(v, ensure_ascii=False)}\n" for k, v in values.items()), encoding="utf-8"
    )
    shadowed = overriding_env(values)
    if shadowed:
        return (
            f"wrote {path}; but {', '.join(shadowed)} set in this environment override it: unset "
            f"{'them' if len(shadowed) > 1 else 'it'} before later commands"
        )
    return f"wrote {path}"


def overriding_env(values: dict[str, Any]) -> list[str]:
    """The ``CUBESAGE_*`` variables of this environment that differ from ``values`` (environment variables
    win over cubesage.toml, so later commands would not use what init wrote)."""

    def same(key: str, env: str) -> bool:
        value = values[key]
        if isinstance(value, list):
            return [v.strip() for v in env.split(",") if v.strip()] == value
        if key.endswith(("_dir", "glossary", "vocabulary")):
            return str(Path(env).expanduser().resolve()) == value
        return env == str(value)

    names = {f"CUBESAGE_{key.upper()}": key for key in values}
    if "warehouse_schemas" in values:
        names["CUBESAGE_WAREHOUSE_SCHEMA"] = "warehouse_schemas"
    return [var for var, key in names.items() if os.environ.get(var) is not None and not same(key, os.environ[var])]


def config_values(config: InitConfig) -> dict[str, Any]:
    """The settings ``cubesage.toml`` keeps (TOML values; paths absolute)."""

    def path(p: Path | None) -> str | None:
        return str(p.resolve()) if p is not None else None

    return {
        "database_url": config.database_url,
        "warehouse_schemas": list(config.schemas),
        "model_dir": path(config.model_dir),
        "glossary": path(config.glossary),
        "wiki_dir": path(config.wiki_dir),
        "detail_vocabulary": path(config.detail_vocabulary),
        "today": config.today.isoformat() if config.today else None,
    }


Step = tuple[str, Callable[[InitRun], str]]
STEPS: tuple[Step, ...] = (
    ("check PostgreSQL and pgvector", _check_database),
    ("create schemas, role and grants", _create_schemas),
    ("draft models", _draft_models),
    ("validate models", _validate_models),
    ("export semantic assets", _export_assets),
    ("build rollups", _build_rollups),
    ("load glossary", _load_glossary),
    ("load few-shots", _load_few_shots),
    ("calibrate retrieval thresholds", _calibrate),
    ("index wiki pages and entity rows", _index_warehouse),
    ("write cubesage.toml", _write_config),
)


def settings_for(config: InitConfig, base: Settings) -> Settings:
    """``base`` with what ``config`` sets (the settings every later command reads from cubesage.toml)."""
    update: dict[str, Any] = {
        "warehouse_schemas": list(config.schemas),
        "model_dir": config.model_dir,
        "glossary": config.glossary,
        "wiki_dir": config.wiki_dir,
        "detail_vocabulary": config.detail_vocabulary,
    }
    if config.today:
        update["today"] = config.today
    if config.database_url:
        update["database_url"] = SecretStr(config.database_url)
    return base.model_copy(update=update)


def run_init(config: InitConfig, base: Settings, on_step: Callable[[str, str], None] | None = None) -> InitRun:
    """Run every step; ``on_step(name, line)`` after each. Errors propagate (``DatabaseSetupError``,
    ``ModelError``, ``GlossaryError``...): the caller reports them."""
    run = InitRun(config, settings_for(config, base))
    for name, step in STEPS:
        run.done[name] = step(run)
        if on_step is not None:
            on_step(name, run.done[name])
    return run


def example_question(model: Any) -> str:
    """A question the model can answer: a sum measure by a string dimension of a joined cube, else a count."""
    ranked = sorted(model.cubes.values(), key=lambda c: -sum(j.relationship == "many_to_one" for j in c.joins))
    for cube in ranked:
        measure = next((m for m in cube.measures.values() if m.type == "sum" and m.title), None)
        if measure is None:
            continue
        for join in cube.joins:
            target = model.cubes[join.target]
            if join.relationship != "many_to_one":
                continue
            dim = next((d for d in target.dimensions.values() if d.type == "string" and d.title), None)
            if dim is not None:
                return f"{measure.title} by {dim.title.lower()}"
        return measure.title
    cube = next(iter(model.cubes.values()))
    return f"How many {cube.title.lower()} are there?"
