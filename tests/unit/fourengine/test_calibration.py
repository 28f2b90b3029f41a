"""Calibration of the V, D and CRAG thresholds from score observations (no database)."""

from __future__ import annotations

import numpy as np
import pytest

from cubesage_core.embeddings import HashEmbedder
from fourengine.calibration import (
    V_OUT_QUANTILE,
    Calibration,
    Sample,
    Scores,
    _Index,
    fbeta_threshold,
    fingerprint,
    fit,
    observe,
    precision_threshold,
)
from fourengine.settings import RetrievalSettings

RNG = np.random.default_rng(7)


def _normal(mean: float, n: int) -> np.ndarray:
    return np.clip(RNG.normal(mean, 0.04, n), -1, 1)


def test_fbeta_threshold_lies_between_separated_distributions() -> None:
    t = fbeta_threshold(_normal(0.7, 200), _normal(0.3, 2000))
    assert t is not None and 0.4 < t < 0.7


def test_recall_weighted_threshold_is_lower_than_f1() -> None:
    pos, neg = _normal(0.55, 300), _normal(0.45, 3000)
    assert fbeta_threshold(pos, neg, 4.0) < fbeta_threshold(pos, neg, 1.0)


def test_precision_threshold_reaches_the_asked_precision_or_says_never() -> None:
    pos, neg = _normal(0.8, 100), _normal(0.5, 1000)
    t = precision_threshold(pos, neg, 0.95)
    assert t is not None
    precision = (pos >= t).sum() / ((pos >= t).sum() + (neg >= t).sum())
    assert precision >= 0.95
    assert precision_threshold(_normal(0.2, 50), _normal(0.8, 50), 0.95) is None


def test_fit_without_data_keeps_the_seed_and_says_so() -> None:
    empty = np.zeros(0)
    cal = fit(Scores(empty, empty, empty, empty, empty, empty), RetrievalSettings())
    seed = RetrievalSettings()
    assert (cal.v_threshold, cal.crag_low, cal.crag_high, cal.d_hit) == (
        seed.threshold,
        seed.crag_low,
        seed.crag_high,
        seed.few_shot_threshold,
    )
    assert set(cal.stats["kept_seed"]) >= {"v", "crag_low", "crag_high", "d_hit", "d_floor"}


def test_fit_reads_crag_grades_off_in_and_out_of_domain_top_scores() -> None:
    top_in, top_out = _normal(0.6, 300), _normal(0.3, 300)
    scores = Scores(_normal(0.6, 300), _normal(0.4, 3000), top_in, top_out, _normal(0.9, 50), _normal(0.6, 500))
    cal = fit(scores, RetrievalSettings())
    assert cal.crag_low == pytest.approx(np.quantile(top_out, 0.9), abs=1e-3)
    assert cal.crag_high >= max(np.median(top_in), np.quantile(top_out, 0.99)) - 1e-3
    assert cal.crag_low < cal.crag_high and cal.d_floor <= cal.d_hit and cal.binding_threshold >= cal.v_threshold
    assert cal.stats["kept_seed"] == [] or cal.stats["kept_seed"] == ["binding"]


def test_v_stays_selective_where_gold_and_hard_negatives_overlap() -> None:
    # whole questions under USE: gold assets score like their other near assets, so F-beta admits everything
    top_out = _normal(0.2, 300)
    scores = Scores(_normal(0.3, 300), _normal(0.3, 3000), _normal(0.45, 300), top_out, np.zeros(0), np.zeros(0))
    cal = fit(scores, RetrievalSettings())
    assert fbeta_threshold(scores.pos, scores.neg, 4.0) < np.quantile(top_out, V_OUT_QUANTILE) - 0.05
    assert cal.v_threshold == pytest.approx(np.quantile(top_out, V_OUT_QUANTILE), abs=1e-3)
    assert (top_out >= cal.v_threshold).mean() <= 1 - V_OUT_QUANTILE + 0.01  # unrelated questions: V rarely fires
    assert cal.stats["v_rule"] == "unrelated_q95"


def test_v_keeps_the_fbeta_fit_where_the_cosine_separates_gold() -> None:
    pos, neg = _normal(0.6, 300), _normal(0.3, 3000)
    top_out = np.concatenate([_normal(0.25, 280), _normal(0.8, 20)])  # a few unrelated questions come close
    scores = Scores(pos, neg, _normal(0.6, 300), top_out, np.zeros(0), np.zeros(0))
    cal = fit(scores, RetrievalSettings())
    assert cal.v_threshold == pytest.approx(fbeta_threshold(pos, neg, 4.0), abs=1e-3)
    assert cal.v_threshold < np.quantile(top_out, V_OUT_QUANTILE) and cal.stats["v_rule"] == "fbeta"


def test_calibration_applies_to_settings() -> None:
    cal = Calibration("fp", "ix", 0.31, 0.8, 0.9, 0.7, 0.5, 0.25)
    s = cal.apply(RetrievalSettings(top_k=7))
    assert (
        s.threshold,
        s.binding_vector_threshold,
        s.few_shot_threshold,
        s.few_shot_example_threshold,
        s.crag_high,
        s.crag_low,
        s.top_k,
    ) == (0.31, 0.8, 0.9, 0.7, 0.5, 0.25, 7)


def _unit(*values: float) -> np.ndarray:
    v = np.zeros(512, dtype=np.float32)
    v[: len(values)] = values
    return v / np.linalg.norm(v)


def test_observe_splits_gold_scores_from_hard_negatives_and_scopes() -> None:
    index = _Index(
        ["table:a.t1", "table:a.t2", "term:x", "table:b.t1"],
        np.asarray(["table", "table", "term", "table"]),
        np.asarray(["a", "a", "a", "b"]),
        np.stack([_unit(1, 0), _unit(0, 1), _unit(1, 0.01), _unit(1, 1)]),
    )
    samples = [
        Sample("q", frozenset({"table:a.t1"}), scope="a"),
        Sample("w", frozenset({"table:a.t1"}), phrase=True, scope="a"),
        Sample("off", in_domain=False),
    ]
    vectors = np.stack([_unit(1, 0.1), _unit(1, 0.1), _unit(0.1, 1)])
    scores = observe(index, samples, vectors)
    assert len(scores.pos) == 2 and scores.pos[0] == pytest.approx(float(vectors[0] @ index.vectors[0]))
    assert len(scores.neg) == 3  # q: t2 and term:x; the wording: t2 only (its own term asset is skipped)
    assert len(scores.top_in) == 1  # wordings are no questions
    assert len(scores.top_out) == 2  # the off-domain question, and q over namespace b


def test_fingerprint_tells_embedders_apart() -> None:
    class Shifted(HashEmbedder):
        def embed(self, texts):  # type: ignore[no-untyped-def]
            return super().embed([f"x{t}" for t in texts])

    assert fingerprint(HashEmbedder()) != fingerprint(Shifted())
    h = HashEmbedder()
    assert fingerprint(h) == fingerprint(h)


def test_gold_tables_named_by_their_physical_table_count_as_the_cubes_table_asset() -> None:
    index = _Index(
        ["table:orders", "table:refunds"],
        np.asarray(["table", "table"]),
        np.asarray(["", ""]),
        np.stack([_unit(1, 0), _unit(0, 1)]),
        {"table:fact_order": "table:orders"},
    )
    scores = observe(index, [Sample("q", frozenset({"table:fact_order"}))], np.stack([_unit(1, 0.2)]))
    assert len(scores.pos) == 1 and scores.pos[0] == pytest.approx(float(_unit(1, 0.2) @ _unit(1, 0)))
    assert len(scores.neg) == 1
