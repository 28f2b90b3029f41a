"""Benchmark data formats (HotpotQA- and MuSiQue-style) and metrics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.multihop import load_corpus, load_questions, recall_at, rrf


def test_hotpotqa_format(tmp_path: Path) -> None:
    (tmp_path / "q.json").write_text(
        json.dumps([{"question": "Q1?", "supporting_facts": [["A", 0], ["B", 2], ["A", 1]]}])
    )
    (tmp_path / "c.json").write_text(json.dumps({"A": ["First. ", "Second."], "B": ["Third."]}))
    questions = load_questions(tmp_path / "q.json")
    assert questions[0].gold_titles == {"A", "B"}
    chunks = load_corpus(tmp_path / "c.json")
    assert [c.heading for c in chunks] == ["A", "B"] and chunks[0].text == "A\nFirst. Second."


def test_musique_format(tmp_path: Path) -> None:
    (tmp_path / "q.json").write_text(
        json.dumps(
            [
                {
                    "question": "Q?",
                    "paragraphs": [
                        {"title": "X", "paragraph_text": "x", "is_supporting": True},
                        {"title": "Y", "paragraph_text": "y", "is_supporting": False},
                    ],
                }
            ]
        )
    )
    (tmp_path / "c.json").write_text(json.dumps([{"title": "X", "text": "x text"}, {"title": "Y", "text": "y"}]))
    assert load_questions(tmp_path / "q.json")[0].gold_titles == {"X"}
    assert [c.heading for c in load_corpus(tmp_path / "c.json")] == ["X", "Y"]


def test_bad_question_file(tmp_path: Path) -> None:
    (tmp_path / "q.json").write_text(json.dumps([{"question": "no gold"}]))
    with pytest.raises(ValueError, match="supporting_facts"):
        load_questions(tmp_path / "q.json")


def test_recall_and_rrf() -> None:
    assert recall_at(["a", "x", "b"], {"a", "b"}, 2) == 0.5
    assert recall_at(["a", "x", "b"], {"a", "b"}, 5) == 1.0
    assert rrf(["a", "b"], ["b", "c"]) == ["b", "a", "c"]


def test_dev_test_halves_are_fixed_and_disjoint() -> None:
    from bench.splits import split_indices

    halves = split_indices(101)
    assert split_indices(101) == halves  # the seed is in the code: the same halves on every run
    assert len(halves["dev"]) == 51 and len(halves["test"]) == 50
    assert sorted(halves["dev"] + halves["test"]) == list(range(101))
    assert halves["dev"] != list(range(51))  # shuffled, not the first half of the file


def test_split_metrics_average_over_the_split_only() -> None:
    from bench.multihop import split_metrics

    recalls = {2: [1.0, 0.0, 0.5], 5: [1.0, 1.0, 0.5], 10: [1.0, 1.0, 1.0]}
    line = split_metrics(recalls, [10.0, 20.0, 30.0], [0, 2])
    assert line["n"] == 2 and line["R@2"] == 0.75 and line["R@5"] == 0.75 and line["query_ms_p50"] == 20.0
