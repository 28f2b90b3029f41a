"""Suggested questions from the demo model: certified measures first, low-cardinality named dimensions."""

from __future__ import annotations

from dataclasses import dataclass, field

from answer.suggest import MAX_VALUES, picks, suggestions
from answer.vocabulary import vocabulary
from cube_models.model import load_model
from cubesage_core.settings import REPO_ROOT

MODEL = load_model(REPO_ROOT / "demo" / "model")


@dataclass
class Values:
    surfaces: dict[str, list[tuple[str, str]]] = field(default_factory=dict)


VALUES = Values(
    {
        "web": [("orders.channel", "web")],
        "app": [("orders.channel", "app")],
        **{f"city{i}": [("customers.city", f"city{i}")] for i in range(MAX_VALUES + 1)},
    }
)


def test_picks_keep_named_low_cardinality_dimensions_reachable_from_the_measure() -> None:
    by_measure = {p.measure: p.dimensions for p in picks(MODEL, vocabulary(), VALUES, "en")}
    assert by_measure["order_items.gmv"] == ("orders.channel",)  # city has too many values
    assert "refunds.count" in by_measure and "orders.channel" in by_measure["refunds.count"]  # via refunds -> orders
    first = next(iter(by_measure))
    assert MODEL.find_member(first).meta.get("certified")


def test_suggestions_cover_measures_dimensions_and_time_in_both_languages() -> None:
    en = suggestions(MODEL, vocabulary(), VALUES, "en")
    zh = suggestions(MODEL, vocabulary(), VALUES, "zh")
    assert len(en) == len(zh) == 6 and len(set(en)) == 6
    assert any(q.endswith("by channel this year") for q in en)
    assert any("this year vs last year" in q for q in en) and any("last month" in q for q in en)
    assert any(q.startswith("今年各渠道的") for q in zh)
    assert all("{" not in q for q in en + zh)


def test_no_dimension_values_no_dimension_questions() -> None:
    questions = suggestions(MODEL, vocabulary(), None, "en")
    assert questions and not any(" by " in q and "by month" not in q and "by quarter" not in q for q in questions)
