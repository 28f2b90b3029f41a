"""Thresholds of engines V and D and of the CRAG grades, fitted to the embedder's score distribution.

The seed's cosines (V 0.65, D 0.95, CRAG 0.65/0.8) were set for its embedder; another embedder puts
relevant and unrelated pairs elsewhere (USE tops out near 0.64 on the demo). So the thresholds are read
off the scores the current embedder gives on a calibration set over the current index:

- **V** admits an asset at the cosine that best separates the gold assets of in-domain questions from
  their nearest non-gold assets (F-beta-optimal over positives vs hard negatives, recall-weighted with
  :data:`V_BETA`: V proposes candidates, the reranker orders them), never below the median best score
  unrelated questions reach. Where gold and hard negatives overlap (USE on whole questions: a question's
  gold assets score no higher than its other near assets), the F-beta optimum admits (nearly) every pair
  (:data:`ADMIT_ALL`): the cosine says nothing about gold there, so V's threshold comes from in-domain vs
  unrelated questions alone, the :data:`V_OUT_QUANTILE` quantile of unrelated questions' best scores (an
  unrelated question gets a V asset in at most 1 - V_OUT_QUANTILE of cases). A term asset binds at the
  cosine where the separation reaches :data:`BINDING_PRECISION`. Gold tables named by their physical
  table (a suite's ``tables``: ``fact_invoice``) count as the table asset of the cube over it.
- **CRAG**: *low* below the :data:`LOW_QUANTILE` quantile of the best score unrelated questions reach
  (the retrieval looks like an unrelated question's); *high* above the median best score of in-domain
  questions and above the :data:`HIGH_OUT_QUANTILE` quantile of unrelated ones.
- **D** hits at the question-question cosine where pairs asking the same query reach
  :data:`D_PRECISION` precision against pairs asking different ones; its example floor where they reach
  :data:`D_FLOOR_PRECISION`, and above the :data:`LOW_QUANTILE` quantile of how close unrelated questions
  come to in-domain ones.

Samples: labelled ``dev`` questions the caller passes (a benchmark's dev split), the approved few-shots
(question -> the members of its query), the glossary (each wording -> its mapped asset; scored for V
only) and :data:`OFF_DOMAIN` questions (language only). Labelled questions are stored in
``semlayer.calibration_question``, so a recomputation fits on them again. A threshold without enough samples keeps the
seed's value and says so in ``stats``. The result is stored in ``semlayer.calibration`` with the
embedder's fingerprint and the index's key, and recomputed by :func:`ensure` when either changes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import psycopg
from psycopg.types.json import Jsonb

from cubesage_core.embeddings import Embedder
from fourengine.calibration_data import OFF_DOMAIN
from fourengine.settings import RetrievalSettings

NAME = "fourengine"
PROBE = "calibration probe: how many per week, and the average 每周多少"
BINDING_PRECISION = 0.95
D_PRECISION = 0.95
D_FLOOR_PRECISION = 0.8  # examples steer generation (and the fast path takes their measures): mostly right
LOW_QUANTILE = 0.9
HIGH_OUT_QUANTILE = 0.99
HARD_NEGATIVES = 20
V_OUT_QUANTILE = 0.95  # V admits only cosines unrelated questions' best matches reach in < 5% of cases
ADMIT_ALL = 0.99  # an F-beta optimum admitting this share of all pairs separates nothing
V_BETA = 4.0  # V is a candidate generator (the reranker orders): recall-weighted; chosen on Spider dev
PAIR_NEGATIVES = 5
MIN_SAMPLES = 8
CLAMP = (0.05, 0.99)


@dataclass(frozen=True)
class Sample:
    """One calibration question: the asset ids it is about (empty: unknown), its scope and query key."""

    text: str
    gold: frozenset[str] = frozenset()
    in_domain: bool = True
    scope: str | None = None  # meta.namespace of the assets it is asked over (None: all)
    query_key: str | None = None  # questions with the same key ask the same query (engine D pairs)
    phrase: bool = False  # a glossary wording, not a question: V positives only


@dataclass(frozen=True)
class Calibration:
    fingerprint: str
    index_key: str
    v_threshold: float
    binding_threshold: float
    d_hit: float
    d_floor: float
    crag_high: float
    crag_low: float
    stats: dict[str, Any] = field(default_factory=dict)

    def apply(self, base: RetrievalSettings) -> RetrievalSettings:
        """``base`` with the calibrated thresholds."""
        return base.with_(
            threshold=self.v_threshold,
            binding_vector_threshold=self.binding_threshold,
            few_shot_threshold=self.d_hit,
            few_shot_example_threshold=self.d_floor,
            crag_high=self.crag_high,
            crag_low=self.crag_low,
        )

    def thresholds(self) -> dict[str, float]:
        return {
            "v": self.v_threshold,
            "binding": self.binding_threshold,
            "d_hit": self.d_hit,
            "d_floor": self.d_floor,
            "crag_high": self.crag_high,
            "crag_low": self.crag_low,
        }


# -- fitting (pure) -------------------------------------------------------------------------------------------
def _ranked(pos: np.ndarray, neg: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Scores of positives and negatives together, highest first, with their labels (1 positive, 0
    negative); None when either side has too few samples to fit on."""
    if len(pos) < MIN_SAMPLES or len(neg) < MIN_SAMPLES:
        return None
    scores = np.concatenate([pos, neg])
    labels = np.concatenate([np.ones(len(pos)), np.zeros(len(neg))])
    order = np.argsort(-scores, kind="stable")
    return scores[order], labels[order]


def fbeta_threshold(pos: np.ndarray, neg: np.ndarray, beta: float = 1.0) -> float | None:
    """The score that maximises F-beta of ``score >= t`` for positives vs negatives (None without data)."""
    if (ranked := _ranked(pos, neg)) is None:
        return None
    scores, labels = ranked
    tp = np.cumsum(labels)
    fp = np.cumsum(1 - labels)
    b2 = beta * beta
    f1 = (1 + b2) * tp / ((1 + b2) * tp + b2 * (len(pos) - tp) + fp)
    best = int(np.argmax(f1))
    return float(scores[best])


def precision_threshold(pos: np.ndarray, neg: np.ndarray, precision: float) -> float | None:
    """The lowest score above which at least ``precision`` of the pairs are positives (None: never)."""
    if (ranked := _ranked(pos, neg)) is None:
        return None
    scores, labels = ranked
    prec = np.cumsum(labels) / np.arange(1, len(labels) + 1)
    ok = np.nonzero(prec >= precision)[0]
    if len(ok) == 0:
        return None
    return float(scores[ok[-1]])


def _clamp(value: float) -> float:
    return round(float(min(max(value, CLAMP[0]), CLAMP[1])), 4)


def _quantile(values: np.ndarray, q: float) -> float | None:
    return float(np.quantile(values, q)) if len(values) >= MIN_SAMPLES else None


@dataclass
class Scores:
    """Score observations the thresholds are read from."""

    pos: np.ndarray
    neg: np.ndarray
    top_in: np.ndarray
    top_out: np.ndarray
    same: np.ndarray
    diff: np.ndarray
    cross: np.ndarray = field(default_factory=lambda: np.zeros(0))  # unrelated question vs in-domain question


def fit(
    scores: Scores,
    base: RetrievalSettings,
    fingerprint: str = "",
    index_key: str = "",
    extra: dict[str, Any] | None = None,
) -> Calibration:
    """Thresholds from ``scores``; each one without enough data keeps ``base``'s value (``stats.kept``)."""
    kept: list[str] = []

    def pick(name: str, value: float | None, default: float) -> float:
        if value is None:
            kept.append(name)
            return default
        return _clamp(value)

    fitted = fbeta_threshold(scores.pos, scores.neg, V_BETA)
    v = pick("v", fitted, base.threshold)
    binding = pick(
        "binding", precision_threshold(scores.pos, scores.neg, BINDING_PRECISION), base.binding_vector_threshold
    )
    binding = max(binding, v)
    low_value = _quantile(scores.top_out, LOW_QUANTILE)
    low = pick("crag_low", low_value, base.crag_low)
    in_median = _quantile(scores.top_in, 0.5)
    out_high = _quantile(scores.top_out, HIGH_OUT_QUANTILE)
    high_value = None if in_median is None or out_high is None else max(in_median, out_high)
    high = max(pick("crag_high", high_value, base.crag_high), low)
    separates = fitted is None or _admitted(scores, fitted) < ADMIT_ALL
    noise = _quantile(scores.top_out, 0.5 if separates else V_OUT_QUANTILE)
    v = _clamp(max(v, noise or 0.0))  # below what unrelated questions reach V admits noise
    binding = max(binding, v)
    d_hit = pick("d_hit", precision_threshold(scores.same, scores.diff, D_PRECISION), base.few_shot_threshold)
    d_floor = pick(
        "d_floor", precision_threshold(scores.same, scores.diff, D_FLOOR_PRECISION), base.few_shot_example_threshold
    )
    unrelated = _quantile(scores.cross, LOW_QUANTILE)  # an example must be closer than unrelated questions come
    d_floor = min(_clamp(max(d_floor, unrelated or 0.0)), d_hit)
    stats = {
        "v_rule": "fbeta" if separates else f"unrelated_q{round(V_OUT_QUANTILE * 100)}",
        "samples": {k: len(getattr(scores, k)) for k in ("pos", "neg", "top_in", "top_out", "same", "diff", "cross")},
        "kept_seed": kept,
        **_summary(scores),
        **(extra or {}),
    }
    return Calibration(fingerprint, index_key, v, binding, d_hit, d_floor, high, low, stats)


def _admitted(scores: Scores, threshold: float) -> float:
    """The share of positive and hard-negative pairs at or above ``threshold``."""
    pairs = np.concatenate([scores.pos, scores.neg])
    return float((pairs >= threshold - 1e-9).mean()) if len(pairs) else 0.0


def _summary(scores: Scores) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in ("pos", "neg", "top_in", "top_out", "same", "diff", "cross"):
        values = getattr(scores, name)
        if len(values):
            out[f"{name}_p10_p50_p90"] = [round(float(np.quantile(values, q)), 4) for q in (0.1, 0.5, 0.9)]
    return out


# -- observations over an index ---------------------------------------------------------------------------------
@dataclass
class _Index:
    ids: list[str]
    types: np.ndarray
    scopes: np.ndarray
    vectors: np.ndarray
    aliases: dict[str, str] = field(default_factory=dict)  # table:<physical table> -> table:<cube>


def _array(value: Any) -> np.ndarray:
    """A pgvector value (``Vector``, or an array when numpy types are registered) as float32."""
    to_numpy = getattr(value, "to_numpy", None)
    return np.asarray(to_numpy() if to_numpy is not None else value, dtype=np.float32)


def _index(conn: psycopg.Connection, types: Sequence[str]) -> _Index:
    rows = conn.execute(
        "SELECT e.asset_id, a.asset_type, coalesce(a.meta->>'namespace', ''), e.embedding "
        "FROM semlayer.asset_embedding e JOIN semlayer.asset a USING (asset_id) "
        "WHERE a.asset_type = ANY(%s) ORDER BY e.asset_id",
        (list(types),),
    ).fetchall()
    vectors = np.asarray([_array(r[3]) for r in rows], dtype=np.float32).reshape(-1, 512)
    return _Index(
        [r[0] for r in rows],
        np.asarray([r[1] for r in rows]),
        np.asarray([r[2] for r in rows]),
        vectors,
        _table_aliases(conn),
    )


def _table_aliases(conn: psycopg.Connection) -> dict[str, str]:
    """``table:<schema.table>`` and ``table:<table>`` -> the table asset of the cube over that table."""
    out: dict[str, str] = {}
    for asset_id, sql_table in conn.execute(
        "SELECT asset_id, meta->>'sql_table' FROM semlayer.asset "
        "WHERE asset_type = 'table' AND meta->>'sql_table' IS NOT NULL ORDER BY asset_id"
    ):
        for name in (sql_table, sql_table.rsplit(".", 1)[-1]):
            out.setdefault(f"table:{name}", asset_id)
    return out


def observe(index: _Index, samples: Sequence[Sample], vectors: np.ndarray) -> Scores:
    """Positive, hard-negative, best and pair scores of ``samples`` (embedded as ``vectors``) over ``index``."""
    pos: list[float] = []
    neg: list[float] = []
    top_in: list[float] = []
    top_out: list[float] = []
    position = {asset_id: i for i, asset_id in enumerate(index.ids)}
    sims = vectors @ index.vectors.T if len(index.ids) else np.zeros((len(samples), 0), dtype=np.float32)
    scopes = sorted(set(index.scopes.tolist()) - {""})
    for i, sample in enumerate(samples):
        row = sims[i]
        mask = np.ones(len(index.ids), dtype=bool) if sample.scope is None else index.scopes == sample.scope
        if sample.phrase:
            mask &= index.types != "term"  # a wording's own term asset is the wording itself
        if not mask.any():
            continue
        if not sample.in_domain:
            top_out.append(float(row[mask].max()))
            continue
        if not sample.phrase:
            top_in.append(float(row[mask].max()))
        if not sample.phrase and sample.scope is not None and len(scopes) > 1:  # the question over another namespace
            other = scopes[(scopes.index(sample.scope) + 1) % len(scopes)] if sample.scope in scopes else scopes[0]
            top_out.append(float(row[index.scopes == other].max()))
        gold = sorted(
            {position[g] for g in (index.aliases.get(g, g) for g in sample.gold) if g in position and mask[position[g]]}
        )
        if not gold:
            continue
        pos.extend(float(row[g]) for g in gold)
        candidates = np.where(mask, row, -np.inf)
        candidates[gold] = -np.inf
        hard = np.sort(candidates[np.isfinite(candidates)])[::-1][:HARD_NEGATIVES]
        neg.extend(float(s) for s in hard)
    same, diff = _pairs(samples, vectors)
    cross = _cross(samples, vectors)
    return Scores(*(np.asarray(x, dtype=np.float64) for x in (pos, neg, top_in, top_out, same, diff, cross)))


def _cross(samples: Sequence[Sample], vectors: np.ndarray) -> list[float]:
    """Cosines of unrelated questions to in-domain ones: how close an unrelated question comes."""
    inside = [i for i, s in enumerate(samples) if s.in_domain and not s.phrase]
    outside = [i for i, s in enumerate(samples) if not s.in_domain]
    if not inside or not outside:
        return []
    return (vectors[outside] @ vectors[inside].T).ravel().tolist()


def _pairs(samples: Sequence[Sample], vectors: np.ndarray) -> tuple[list[float], list[float]]:
    """Question-question cosines: pairs asking the same query, and each question's nearest other-query ones."""
    keyed = [i for i, s in enumerate(samples) if s.query_key and s.in_domain and not s.phrase]
    if len(keyed) < 2:
        return [], []
    sims = vectors[keyed] @ vectors[keyed].T
    keys = [samples[i].query_key for i in keyed]
    same: list[float] = []
    diff: list[float] = []
    for a in range(len(keyed)):
        others = []
        for b in range(len(keyed)):
            if a == b:
                continue
            if keys[a] == keys[b]:
                if a < b:
                    same.append(float(sims[a, b]))
            elif samples[keyed[a]].scope == samples[keyed[b]].scope:
                others.append(float(sims[a, b]))
        diff.extend(sorted(others, reverse=True)[:PAIR_NEGATIVES])
    return same, diff


# -- samples the index itself offers ----------------------------------------------------------------------------
def index_samples(conn: psycopg.Connection) -> list[Sample]:
    """Approved few-shots (question -> the members of its query) and glossary wordings (-> mapped asset)."""
    out: list[Sample] = []
    for question, cube_query in conn.execute(
        "SELECT question, cube_query FROM semlayer.dynamic_few_shot_cache WHERE approved AND cube_query IS NOT NULL"
    ):
        members = [*cube_query.get("measures", []), *cube_query.get("dimensions", [])]
        gold = frozenset(
            [f"metric:{m}" for m in cube_query.get("measures", [])]
            + [f"dimension:{m}" for m in cube_query.get("dimensions", [])]
        )
        key = json.dumps(sorted(members))
        out.append(Sample(question, gold, query_key=key))
    for canonical, synonyms, mapped in conn.execute(
        "SELECT canonical_term, synonyms, mapped_asset_id FROM semlayer.business_term "
        "WHERE mapped_asset_id IS NOT NULL AND term_id NOT LIKE 'model:%%'"
    ):
        for wording in dict.fromkeys([canonical, *(synonyms or [])]):
            if wording and wording.strip():
                out.append(Sample(wording, frozenset([mapped]), phrase=True))
    return out


def off_domain_samples() -> list[Sample]:
    return [Sample(text, in_domain=False) for text in OFF_DOMAIN]


# -- identity of the embedder and the index ----------------------------------------------------------------------
_FINGERPRINTS: dict[int, str] = {}


def fingerprint(embedder: Embedder) -> str:
    """The embedder's class, dimension and its vector of a fixed probe text (rounded), hashed."""
    key = id(embedder)
    if key not in _FINGERPRINTS:
        vector = np.round(np.asarray(embedder.embed_one(PROBE), dtype=np.float64), 3)
        digest = hashlib.sha1(vector.tobytes()).hexdigest()[:12]
        _FINGERPRINTS[key] = f"{type(embedder).__name__}/{embedder.dim}/{digest}"
    return _FINGERPRINTS[key]


def _method() -> str:
    """The fitting method's identity: a change of its constants or off-domain questions refits."""
    return repr(
        (
            OFF_DOMAIN,
            V_BETA,
            V_OUT_QUANTILE,
            ADMIT_ALL,
            BINDING_PRECISION,
            D_PRECISION,
            D_FLOOR_PRECISION,
            LOW_QUANTILE,
            HIGH_OUT_QUANTILE,
            HARD_NEGATIVES,
            PAIR_NEGATIVES,
        )
    )


def index_key(conn: psycopg.Connection) -> str:
    """Changes when assets, terms, approved few-shots or the fitting method change."""
    row = conn.execute(
        "SELECT (SELECT count(*) FROM semlayer.asset_embedding), (SELECT max(updated_at) FROM semlayer.asset), "
        "(SELECT count(*) FROM semlayer.business_term), (SELECT max(updated_at) FROM semlayer.business_term), "
        "(SELECT count(*) FROM semlayer.dynamic_few_shot_cache WHERE approved)"
    ).fetchone()
    return hashlib.sha1(repr((row, _method())).encode()).hexdigest()[:12]


# -- storage -------------------------------------------------------------------------------------------------
_LOAD = "SELECT fingerprint, index_key, thresholds, stats FROM semlayer.calibration WHERE name = %s"


def _from_row(row: tuple[Any, ...] | None) -> Calibration | None:
    if row is None:
        return None
    t = row[2]
    return Calibration(
        row[0], row[1], t["v"], t["binding"], t["d_hit"], t["d_floor"], t["crag_high"], t["crag_low"], row[3] or {}
    )


def load(conn: psycopg.Connection) -> Calibration | None:
    return _from_row(conn.execute(_LOAD, (NAME,)).fetchone())


async def load_async(conn: psycopg.AsyncConnection) -> Calibration | None:
    """The stored calibration (None when absent, or when the table does not exist yet)."""
    exists = await (await conn.execute("SELECT to_regclass('semlayer.calibration')")).fetchone()
    if exists is None or exists[0] is None:
        return None
    return _from_row(await (await conn.execute(_LOAD, (NAME,))).fetchone())


def save(conn: psycopg.Connection, calibration: Calibration) -> None:
    conn.execute(
        "INSERT INTO semlayer.calibration (name, fingerprint, index_key, thresholds, stats, computed_at) "
        "VALUES (%s, %s, %s, %s, %s, now()) ON CONFLICT (name) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, "
        "index_key = EXCLUDED.index_key, thresholds = EXCLUDED.thresholds, stats = EXCLUDED.stats, "
        "computed_at = now()",
        (
            NAME,
            calibration.fingerprint,
            calibration.index_key,
            Jsonb(calibration.thresholds()),
            Jsonb(calibration.stats),
        ),
    )


def compute(
    conn: psycopg.Connection, embedder: Embedder, labelled: Sequence[Sample] = (), base: RetrievalSettings | None = None
) -> Calibration:
    """Fit the thresholds on ``labelled`` + the index's own samples + the off-domain questions."""
    base = base or RetrievalSettings()
    samples = [*labelled, *index_samples(conn), *off_domain_samples()]
    vectors = embedder.embed([s.text for s in samples]) if samples else np.zeros((0, embedder.dim), np.float32)
    scores = observe(_index(conn, base.vector_types), samples, vectors)
    extra = {"labelled": len(labelled), "source": "labelled+index" if labelled else "index"}
    return fit(scores, base, fingerprint(embedder), index_key(conn), extra)


def save_questions(conn: psycopg.Connection, samples: Sequence[Sample]) -> None:
    """Replace the stored labelled questions (phrases are the index's own and are not stored)."""
    with conn.transaction():
        conn.execute("DELETE FROM semlayer.calibration_question")
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO semlayer.calibration_question (question, gold, in_domain, scope, query_key) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                [(s.text, sorted(s.gold), s.in_domain, s.scope, s.query_key) for s in samples if not s.phrase],
            )


def stored_questions(conn: psycopg.Connection) -> list[Sample]:
    rows = conn.execute(
        "SELECT question, gold, in_domain, scope, query_key FROM semlayer.calibration_question ORDER BY question"
    ).fetchall()
    return [Sample(q, frozenset(g or []), bool(d), scope, key) for q, g, d, scope, key in rows]


def ensure(
    conn: psycopg.Connection, embedder: Embedder, labelled: Sequence[Sample] | None = None, force: bool = False
) -> tuple[Calibration, bool]:
    """The stored calibration, recomputed (and stored) when absent, for another embedder or another index, or
    when new ``labelled`` questions are given (they replace the stored ones; None: fit on the stored ones);
    ``(calibration, recomputed)``."""
    stored = load(conn)
    if (
        labelled is None
        and not force
        and stored is not None
        and stored.fingerprint == fingerprint(embedder)
        and stored.index_key == index_key(conn)
    ):
        return stored, False
    if labelled is not None:
        save_questions(conn, labelled)
    calibration = compute(conn, embedder, stored_questions(conn))
    save(conn, calibration)
    return calibration, True


def as_dict(calibration: Calibration) -> dict[str, Any]:
    return asdict(calibration)
