"""Normalisation and default search terms."""

from fourengine.terms import default_search_terms, normalise, singular


def test_normalise_lowercases_singularises_and_splits_separators() -> None:
    assert normalise("Singers") == "singer"
    assert normalise("Home_Town") == "home town"
    assert normalise("  Cities ") == "city"
    assert normalise("GMV") == "gmv"
    assert normalise("成交总额") == "成交总额"
    assert normalise("ＧＭＶ") == "gmv"  # NFKC full-width


def test_singular_leaves_short_and_non_plural_words() -> None:
    assert [singular(w) for w in ("bus", "status", "analysis", "boxes", "id")] == [
        "bus",
        "status",
        "analysis",
        "box",
        "id",
    ]


def test_default_search_terms_mixes_jieba_segments_and_english_ngrams() -> None:
    terms = default_search_terms("华东地区本月GMV是多少")
    assert "gmv" in terms and "本月" in terms
    english = default_search_terms("How many orders per sales channel?")
    assert {"order", "sale channel", "channel"} <= set(english)  # normalised like the lexemes
    assert "how" not in english and "how many" not in english  # stop words do not start or end a term


def test_default_search_terms_are_unique_and_normalised() -> None:
    terms = default_search_terms("Orders orders ORDERS")
    assert terms.count("order") == 1
