"""Benchmark data formats (HotpotQA- and MuSiQue-style) and metrics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.multihop import load_corpus, load_questions, recall_at, rrf


def test_hotpotqa_format(tmp_path: Path) -> None:
    (tmp_path / "q.json").write_text(json.dumps([
        {"question": "Q1?", "supporting_facts": [["A", 0], ["B", 2], ["A", 1]]}]))
    (tmp_path / "c.json").write_text(json.dumps({"A": ["First. ", "Second."], "B": ["Third."]}))
    questions = load_questions(tmp_path / "q.json")
    assert questions[0].gold_titles == {"A", "B"}
    chunks = load_corpus(tmp_path / "c.json")
    assert [c.heading for c in chunks] == ["A", "B"] and chunks[0].text == "A\nFirst. Second."


def test_musique_format(tmp_path: Path) -> None:
    (tmp_path / "q.json").write_text(json.dumps([{"question": "Q?", "paragraphs": [
        {"title": "X", "paragraph_text": "x", "is_supporting": True},
        {"title": "Y", "paragraph_text": "y", "is_supporting": False}]}]))
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
