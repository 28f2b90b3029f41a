"""Schema-linking benchmark: table retrieval on a Spider/BIRD-style set, cubesage vs BM25 / dense / RRF.

Each database of ``tables.json`` (those the questions use) is loaded as semantic assets
(tables, columns with their natural names, foreign keys as join edges, a term per
table/column name) into a separate database ``cubesage_bench_<dir>`` of the same
PostgreSQL server. Gold tables come from the gold SQL (sqlglot). Settings:
``per-database`` (rank the tables of the question's database) and ``union`` (rank all
tables of all databases; gold = (db, table)). Every line is for one split: the questions are halved
into ``dev`` and ``test`` by a fixed seed (``bench.splits``). No LLM. ``query_ms_p50`` of the systems that
embed the question (cubesage, dense, rrf) includes the question's embedding time. A second
part measures the retrieval latency of one question on the demo warehouse.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import sqlglot
from sqlglot import exp

from bench.splits import split_indices
from cubesage_core import db
from cubesage_core.embeddings import Embedder, get_embedder
from cubesage_core.scratch import scratch_database
from fourengine.models import Asset
from fourengine.retrieve import Retriever
from fourengine.settings import RetrievalSettings
from fourengine.store import TermRow, upsert_assets, upsert_join_edges, upsert_terms
from fourengine.terms import STOPWORDS, words

KS = (1, 3, 5, 10)
RRF_K = 60
QUESTION_FILES = ("dev.json", "questions.json", "test.json", "train.json")


class BenchDataError(ValueError):
    """The benchmark directory is not a Spider/BIRD-style set."""


@dataclass
class Table:
    key: str  # "<db>.<table>" lower-case
    db_id: str
    name: str
    natural: str
    columns: list[tuple[str, str, str]]  # (original name, natural name, type)
    fks: list[tuple[str, str, str, str]] = field(default_factory=list)  # (table, column, ref table, ref column)
    pk: str | None = None

    @property
    def asset_id(self) -> str:
        return f"table:{self.key}"

    @property
    def document(self) -> str:
        return f"{self.name} {self.natural}: " + ", ".join(c[1] for c in self.columns)


@dataclass
class Question:
    text: str
    db_id: str
    gold: set[str]  # table keys
    sql: str = ""


# -- data ---------------------------------------------------------------------------------------------------
def _questions_file(folder: Path) -> Path:
    for name in QUESTION_FILES:
        if (folder / name).exists():
            return folder / name
    found = sorted(p for p in folder.glob("*.json") if p.name != "tables.json")
    if not found:
        raise BenchDataError(f"{folder}: no questions file (looked for {', '.join(QUESTION_FILES)})")
    return found[0]


def gold_tables(sql: str, table_names: set[str]) -> set[str]:
    """Lower-case table names referenced by ``sql`` that exist in the database."""
    try:
        trees = sqlglot.parse(sql, read="sqlite")
    except sqlglot.errors.SqlglotError:
        return set()
    names = {t.name.lower() for tree in trees if tree is not None for t in tree.find_all(exp.Table)}
    return names & table_names


def load_set(folder: Path, limit: int | None = None) -> tuple[dict[str, list[Table]], list[Question], int]:
    """Schemas of the databases the questions use, the questions with gold tables, and the skipped count."""
    tables_path = folder / "tables.json"
    if not tables_path.exists():
        raise BenchDataError(f"{folder}: tables.json not found")
    raw_q = json.loads(_questions_file(folder).read_text())
    schemas: dict[str, list[Table]] = {}
    for entry in json.loads(tables_path.read_text()):
        db_id = entry["db_id"]
        tables = [
            Table(f"{db_id}.{orig.lower()}", db_id, orig, nat, [])
            for orig, nat in zip(entry["table_names_original"], entry["table_names"], strict=True)
        ]
        for (t_idx, orig), (_, nat), ctype in zip(
            entry["column_names_original"], entry["column_names"], entry["column_types"], strict=True
        ):
            if t_idx >= 0:
                tables[t_idx].columns.append((orig, nat, ctype))
        schemas[db_id] = tables
    fk_source = {e["db_id"]: e for e in json.loads(tables_path.read_text())}
    questions: list[Question] = []
    skipped = 0
    for item in raw_q[: limit or None]:
        sql = item.get("query") or item.get("SQL") or ""
        db_id = item["db_id"]
        names = {t.name.lower() for t in schemas.get(db_id, [])}
        gold = gold_tables(sql, names)
        if not gold:
            skipped += 1
            continue
        questions.append(Question(item["question"], db_id, {f"{db_id}.{g}" for g in gold}, sql))
    used = {q.db_id for q in questions}
    schemas = {k: v for k, v in schemas.items() if k in used}
    for db_id, tables in schemas.items():
        _attach_fks(tables, fk_source[db_id])
    return schemas, questions, skipped


def _attach_fks(tables: list[Table], entry: dict[str, Any]) -> None:
    cols = [(t, orig) for t, orig in entry["column_names_original"]]
    fks = []
    for a, b in entry.get("foreign_keys", []):
        (ta, ca), (tb, cb) = cols[a], cols[b]
        if ta >= 0 and tb >= 0 and ta != tb:
            fks.append((tables[ta].key, ca, tables[tb].key, cb))
    pks = {cols[i][0]: cols[i][1] for i in _flat(entry.get("primary_keys", [])) if cols[i][0] >= 0}
    for idx, t in enumerate(tables):
        t.fks = [f for f in fks if f[0] == t.key]
        t.pk = pks.get(idx)


def _flat(values: Iterable[Any]) -> list[int]:
    out: list[int] = []
    for v in values:
        out.extend(_flat(v) if isinstance(v, list) else [int(v)])
    return out


# -- bench database -----------------------------------------------------------------------------------------
def bench_url(admin_url: str, name: str) -> str:
    dbname = "cubesage_bench_" + re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    return scratch_database(admin_url, dbname, setup="extensions")  # load_assets applies the schema


def load_assets(url: str, schemas: dict[str, list[Table]], embedder: Embedder) -> dict[str, int]:
    """(Re)write the bench database's semlayer from the schemas (it is dedicated to this set)."""
    db.apply_schema(url)
    assets, texts, terms, edges = _semlayer_rows(schemas)
    with db.connection(url) as conn:
        ids = [a.asset_id for a in assets]
        conn.execute("DELETE FROM semlayer.asset WHERE NOT (asset_id = ANY(%s))", (ids,))
        conn.execute("DELETE FROM semlayer.business_term WHERE NOT (term_id = ANY(%s))", ([t.term_id for t in terms],))
        conn.execute("DELETE FROM semlayer.join_edge WHERE NOT (edge_id = ANY(%s))", ([e["edge_id"] for e in edges],))
        embedded = upsert_assets(
            conn,
            [a for a in assets if a.asset_type == "table"],
            [t for a, t in zip(assets, texts, strict=True) if a.asset_type == "table"],
            embedder,
        )
        embedded += upsert_assets(
            conn,
            [a for a in assets if a.asset_type != "table"],
            [t for a, t in zip(assets, texts, strict=True) if a.asset_type != "table"],
            embedder,
        )
        upsert_terms(conn, terms)
        upsert_join_edges(conn, edges)
        conn.execute("ANALYZE")
    return {"assets": len(assets), "embedded": embedded, "terms": len(terms), "join_edges": len(edges)}


def _semlayer_rows(
    schemas: dict[str, list[Table]],
) -> tuple[list[Asset], list[str], list[TermRow], list[dict[str, Any]]]:
    """The assets (tables, then each table's columns), their embedded texts, their terms and the join edges
    of the foreign keys."""
    assets: list[Asset] = []
    texts: list[str] = []
    terms: list[TermRow] = []
    edges: list[dict[str, Any]] = []
    for db_id, tables in schemas.items():
        for t in tables:
            meta = {"namespace": db_id}
            assets.append(
                Asset(
                    t.asset_id,
                    "table",
                    t.key,
                    t.natural,
                    "columns: " + ", ".join(c[1] for c in t.columns),
                    None,
                    False,
                    meta,
                )
            )
            texts.append(t.document)
            terms.append(TermRow(t.asset_id, t.natural, [t.name], "en", "", "table", t.asset_id))
            fk_cols = {f[1].lower() for f in t.fks}
            for orig, nat, ctype in t.columns:
                cid = f"column:{t.key}.{orig.lower()}"
                cmeta = {
                    "namespace": db_id,
                    "type": "time" if ctype == "time" else ctype,
                    "primary_key": orig == t.pk,
                    "foreign_key": orig.lower() in fk_cols,
                }
                assets.append(Asset(cid, "column", f"{t.key}.{orig}", nat, "", t.asset_id, False, cmeta))
                texts.append(f"{t.natural} {nat}")
                terms.append(TermRow(cid, nat, [orig], "en", "", "column", cid))
            for left, lcol, right, rcol in t.fks:
                edges.append(
                    {
                        "edge_id": f"{left}.{lcol}->{right}.{rcol}",
                        "left_table": left,
                        "right_table": right,
                        "on_sql": f"{left}.{lcol} = {right}.{rcol}",
                        "relationship": "many_to_one",
                        "fanout_risk": "low",
                    }
                )
    return assets, texts, terms, edges


# -- baselines ----------------------------------------------------------------------------------------------
def _tokens(text: str) -> list[str]:
    return [w for w in words(text.replace("_", " ")) if w not in STOPWORDS]


class BM25:
    """Okapi BM25 (k1 1.5, b 0.75) over table documents."""

    def __init__(self, docs: list[str], k1: float = 1.5, b: float = 0.75) -> None:
        self.tf = [Counter(_tokens(d)) for d in docs]
        self.len = np.array([sum(c.values()) for c in self.tf], dtype=float)
        self.avg = float(self.len.mean()) if len(docs) else 0.0
        df = Counter(w for c in self.tf for w in c)
        n = len(docs)
        self.idf = {w: math.log(1 + (n - f + 0.5) / (f + 0.5)) for w, f in df.items()}
        self.k1, self.b = k1, b

    def scores(self, query: str, rows: list[int]) -> np.ndarray:
        q = _tokens(query)
        out = np.zeros(len(rows))
        for j, i in enumerate(rows):
            tf, norm = self.tf[i], self.k1 * (1 - self.b + self.b * self.len[i] / self.avg)
            out[j] = sum(self.idf.get(w, 0.0) * tf[w] * (self.k1 + 1) / (tf[w] + norm) for w in q if w in tf)
        return out


def rrf(rankings: list[list[str]], k: int = RRF_K) -> list[str]:
    score: dict[str, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking):
            score[key] = score.get(key, 0.0) + 1.0 / (k + rank + 1)
    return sorted(score, key=lambda key: -score[key])


# -- metrics ------------------------------------------------------------------------------------------------
def metrics(rankings: list[list[str]], golds: list[set[str]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for k in KS:
        hits = [len(set(r[:k]) & g) / len(g) for r, g in zip(rankings, golds, strict=True)]
        out[f"R@{k}"] = round(float(np.mean(hits)), 4)
    for k in (5, 10):
        out[f"All@{k}"] = round(float(np.mean([g <= set(r[:k]) for r, g in zip(rankings, golds, strict=True)])), 4)
    return out


def split_lines(
    data: str, setting: str, system: str, rankings: list[list[str]], golds: list[set[str]], ms: list[float]
) -> list[dict[str, Any]]:
    """One line per split (``bench.splits``): the metrics over that half of the questions."""
    out = []
    for split, idx in split_indices(len(golds)).items():
        r, g, m = [rankings[i] for i in idx], [golds[i] for i in idx], [ms[i] for i in idx]
        out.append(
            {
                "bench": "schema-linking",
                "data": data,
                "split": split,
                "setting": setting,
                "system": system,
                "n": len(g),
                **(metrics(r, g) if g else {}),
                "query_ms_p50": round(statistics.median(m), 3) if m else None,
            }
        )
    return out


# -- runs ---------------------------------------------------------------------------------------------------
def run(
    folder: Path,
    admin_url: str,
    *,
    limit: int | None = None,
    settings: RetrievalSettings | None = None,
    emit: Callable[[dict[str, Any]], None] = print,
    progress: Callable[[str, int, int], None] | None = None,
) -> list[dict[str, Any]]:
    """Run both settings for all four systems; each JSON line is passed to ``emit``."""
    schemas, questions, skipped = load_set(folder, limit)
    if not questions:
        raise BenchDataError(f"{folder}: no question with a parseable gold SQL")
    embedder = get_embedder()
    url = bench_url(admin_url, folder.name)
    load_assets(url, schemas, embedder)
    if settings is None or settings.calibrated:
        emit(calibrate(url, folder.name, questions, embedder))
    tables = [t for ts in schemas.values() for t in ts]
    keys = [t.key for t in tables]
    by_db = {d: [i for i, t in enumerate(tables) if t.db_id == d] for d in schemas}
    embedder.embed(["warm up"])  # model load is not part of a question
    doc_vecs = embedder.embed([t.document for t in tables])
    q_vecs, embed_ms = _embed_each([q.text for q in questions], embedder)
    bm25 = BM25([t.document for t in tables])
    golds = [q.gold for q in questions]
    lines: list[dict[str, Any]] = []
    cube = _cubesage_rankings(url, questions, q_vecs, settings, progress)
    for setting in ("per-database", "union"):
        ranks: dict[str, list[list[str]]] = {"bm25": [], "dense": [], "rrf": []}
        ms: dict[str, list[float]] = {"bm25": [], "dense": [], "rrf": []}
        for qi, q in enumerate(questions):
            rows = by_db[q.db_id] if setting == "per-database" else list(range(len(tables)))
            t0 = time.perf_counter()
            bm = [keys[rows[i]] for i in np.argsort(-bm25.scores(q.text, rows), kind="stable")]
            t1 = time.perf_counter()
            dn = [keys[rows[i]] for i in np.argsort(-(doc_vecs[rows] @ q_vecs[qi]), kind="stable")]
            t2 = time.perf_counter()
            ranks["bm25"].append(bm)
            ranks["dense"].append(dn)
            ranks["rrf"].append(rrf([bm, dn]))
            t3 = time.perf_counter()
            ms["bm25"].append((t1 - t0) * 1000)
            ms["dense"].append((t2 - t1) * 1000 + embed_ms[qi])
            ms["rrf"].append((t3 - t0) * 1000 + embed_ms[qi])
        c_ranks, c_ms = cube[setting][0], [m + e for m, e in zip(cube[setting][1], embed_ms, strict=True)]
        for system, r, m in (
            ("cubesage", c_ranks, c_ms),
            ("bm25", ranks["bm25"], ms["bm25"]),
            ("dense", ranks["dense"], ms["dense"]),
            ("rrf", ranks["rrf"], ms["rrf"]),
        ):
            for line in split_lines(folder.name, setting, system, r, golds, m):
                if system == "cubesage":
                    line["skipped_questions"] = skipped
                emit(line)
                lines.append(line)
    return lines


def calibrate(url: str, data: str, questions: list[Question], embedder: Embedder) -> dict[str, Any]:
    """Fit the retrieval thresholds on the ``dev`` half only (``fourengine.calibration``); the summary line."""
    from fourengine.calibration import Sample, compute, save

    dev = [questions[i] for i in split_indices(len(questions))["dev"]]
    samples = [
        Sample(
            q.text, frozenset(f"table:{g}" for g in q.gold), scope=q.db_id, query_key=" ".join(q.sql.lower().split())
        )
        for q in dev
    ]
    with db.connection(url) as conn:
        calibration = compute(conn, embedder, samples)
        save(conn, calibration)
    return {
        "bench": "schema-linking",
        "data": data,
        "calibration": calibration.thresholds(),
        "fitted_on": "dev",
        "samples": calibration.stats.get("samples"),
        "kept_seed": calibration.stats.get("kept_seed"),
    }


def _embed_each(texts: list[str], embedder: Embedder) -> tuple[np.ndarray, list[float]]:
    """Embed one question at a time, as a query would, timing each."""
    vectors, ms = [], []
    for text in texts:
        started = time.perf_counter()
        vectors.append(embedder.embed([text])[0])
        ms.append((time.perf_counter() - started) * 1000)
    return np.asarray(vectors), ms


def _cubesage_rankings(
    url: str,
    questions: list[Question],
    q_vecs: np.ndarray,
    settings: RetrievalSettings | None,
    progress: Callable[[str, int, int], None] | None,
) -> dict[str, tuple[list[list[str]], list[float]]]:
    async def go() -> dict[str, tuple[list[list[str]], list[float]]]:
        retriever = Retriever(url, settings)
        out: dict[str, tuple[list[list[str]], list[float]]] = {}
        try:
            for setting in ("per-database", "union"):
                ranks, ms = [], []
                for i, q in enumerate(questions):
                    result = await retriever.retrieve(
                        q.text, None, embedding=q_vecs[i], scope=q.db_id if setting == "per-database" else None
                    )
                    ranks.append([t.removeprefix("table:") for t in result.tables()])
                    ms.append(result.timings_ms["retrieval"])
                    if progress:
                        progress(setting, i + 1, len(questions))
                out[setting] = (ranks, ms)
        finally:
            await retriever.aclose()
        return out

    return asyncio.run(go())


# -- latency on the demo warehouse --------------------------------------------------------------------------
LATENCY_QUESTIONS = (
    "What was GMV last month?",
    "华东地区本月GMV是多少",
    "order count by channel in 2024",
    "各地区的退款率",
    "average order value of VIP customers by region",
    "新客数按月",
    "revenue trend this year",
    "top products by units sold in 华南",
    "refund amount by reason last quarter",
    "支付宝支付金额",
    "active customers per month",
    "which categories have the highest refund rate",
)


def latency(url: str, rounds: int = 5, settings: RetrievalSettings | None = None) -> dict[str, Any]:
    """p50/p95 of one retrieval (R+V+D+G+rerank+budget; embedding reported apart) on a loaded demo DB."""
    with db.connection(url) as conn:
        tables = db.one(conn.execute("SELECT count(*) FROM semlayer.asset WHERE asset_type = 'table'").fetchone())[0]
    line: dict[str, Any] = {"bench": "retrieval-latency", "data": "demo"}
    if not tables:
        return line | {"skipped": "the demo semantic layer is empty (run `cubesage demo load`)"}
    embedder = get_embedder()
    embedder.embed(["warm up"])  # model load is not part of a question
    embed_ms, rows = [], []
    for question in LATENCY_QUESTIONS:
        started = time.perf_counter()
        rows.append(embedder.embed([question])[0])
        embed_ms.append((time.perf_counter() - started) * 1000)
    vectors = np.asarray(rows)

    async def go() -> list[dict[str, float]]:
        retriever = Retriever(url, settings)
        out = []
        try:
            for q, v in zip(LATENCY_QUESTIONS, vectors, strict=True):  # warm-up
                await retriever.retrieve(q, embedding=v)
            for _ in range(rounds):
                for q, v in zip(LATENCY_QUESTIONS, vectors, strict=True):
                    out.append((await retriever.retrieve(q, embedding=v)).timings_ms)
        finally:
            await retriever.aclose()
        return out

    timings = asyncio.run(go())
    ms = sorted(t["retrieval"] for t in timings)

    def pct(p: float) -> float:
        return round(ms[min(len(ms) - 1, int(p * len(ms)))], 3)

    stages = {
        k: round(statistics.median(t.get(k, 0.0) for t in timings), 3)
        for k in ("R", "V", "D", "R+V+D", "G", "rerank", "budget")
    }
    return line | {
        "n": len(ms),
        "p50_ms": pct(0.5),
        "p95_ms": pct(0.95),
        "max_ms": round(ms[-1], 3),
        "stage_p50_ms": stages,
        "embed_ms_p50": round(statistics.median(embed_ms), 3),
    }


def cli_run(
    data: Path, *, url: str | None, demo_url: str | None, limit: int | None, rounds: int, skip_latency: bool
) -> int:
    """``cubesage bench schema-linking``: JSON lines on stdout, a progress bar on stderr; the exit code."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    admin = url or db.database_url()

    def emit(line: dict[str, Any]) -> None:
        print(json.dumps(line, ensure_ascii=False), flush=True)

    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
    ) as progress:
        tasks: dict[str, Any] = {}

        def advance(setting: str, done: int, total: int) -> None:
            if setting not in tasks:
                tasks[setting] = progress.add_task(f"cubesage {setting}", total=total)
            progress.update(tasks[setting], completed=done)

        try:
            run(data, admin, limit=limit, emit=emit, progress=advance)
        except BenchDataError as exc:
            console.print(f"[red]{exc}[/red]")
            return 2
    if not skip_latency:
        emit(latency(demo_url or admin, rounds=rounds))
    return 0
