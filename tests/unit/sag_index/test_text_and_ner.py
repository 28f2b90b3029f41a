"""Normalisation, tokenisation and dictionary NER."""

from __future__ import annotations

from sag_index._ner import dictionary_mentions, surface_mentions
from sag_index._text import fold, normalize_name, tokenize


def test_normalize_name_folds_accents_case_and_qualifiers() -> None:
    assert normalize_name("Lilu (mythology)") == "lilu"
    assert normalize_name("Alû") == "alu"
    assert normalize_name('"Aurora X1 headphones"') == "aurora x1 headphones"
    assert normalize_name("华东") == "华东"
    assert fold("ＡＢＣ") == "abc"


def test_tokenize_english_and_chinese() -> None:
    tokens = tokenize("Which table has the refund reasons?")
    assert tokens == ["table", "refund", "reasons"]
    zh = tokenize("华东地区本月的退款率")
    assert "华东" in zh and "退款" in "".join(zh) and "的" not in zh
    assert tokenize("fact_refund.reason") == ["fact_refund", "reason"]


def test_dictionary_mentions_prefer_longest_match() -> None:
    dictionary = {"li wei": "e1", "wei": "e2", "aurora x1 headphones": "e3", "aurora": "e4", "王芳": "e5"}
    found = dictionary_mentions("Refunds of Li Wei for the Aurora X1 headphones and 王芳的订单", dictionary)
    assert [m.entity_id for m in found] == ["e3", "e1", "e5"]


def test_dictionary_mentions_ignore_stopwords_and_absent_names() -> None:
    assert dictionary_mentions("what is the GMV this month", {"the": "x", "what": "y"}) == []
    assert dictionary_mentions("nothing here", {"li wei": "e1"}) == []


def test_surface_mentions() -> None:
    spans = surface_mentions('Who directed "The Jump" with Emma Johnson?')
    assert "The Jump" in spans and "Emma Johnson" in spans and "Who" not in spans
