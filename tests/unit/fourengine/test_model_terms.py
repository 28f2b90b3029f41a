"""Terms derived from the published model: titles, names in words, meta.synonyms; keys and time skipped."""

from __future__ import annotations

from fourengine.model_terms import model_terms


def _row(asset_id: str, kind: str, title: str | None, **meta: object) -> tuple:
    name = asset_id.split(":", 1)[1]
    return (asset_id, kind, name, title, {"source": "cube_models", **meta})


def _by_id(rows: list[tuple]) -> dict[str, list[str]]:
    return {t.term_id: t.lexemes for t in model_terms(rows)}


def test_titles_names_and_synonyms_become_lexemes() -> None:
    terms = _by_id(
        [
            _row(
                "metric:invoices.avg_total",
                "metric",
                "Average invoice total",
                cube="invoices",
                agg="avg",
                user_meta={"synonyms": ["mean basket", "平均发票金额"]},
            ),
            _row("dimension:tracks.genre_name", "dimension", "Genre", cube="tracks", type="string"),
        ]
    )
    # "avg total" is language only: no term of its own
    assert terms["model:metric:invoices.avg_total"] == ["average invoice total", "mean basket", "平均发票金额"]
    assert terms["model:dimension:tracks.genre_name"] == ["genre", "genre name"]


def test_keys_time_private_and_language_only_words_make_no_term() -> None:
    terms = _by_id(
        [
            _row("dimension:orders.customer_id", "dimension", "Customer", cube="orders", type="number"),
            _row("dimension:orders.o_custkey", "dimension", None, cube="orders", type="number"),
            _row("dimension:orders.id", "dimension", "Order", cube="orders", type="number", primary_key=True),
            _row("dimension:orders.order_date", "dimension", "Order date", cube="orders", type="time"),
            _row("metric:orders.secret", "metric", "Secret sauce", cube="orders", agg="sum", public=False),
            _row("metric:orders.total", "metric", "Total", cube="orders", agg="sum"),
        ]
    )
    assert terms == {}


def test_a_count_named_like_its_cube_leaves_the_word_to_the_cube() -> None:
    terms = _by_id(
        [
            _row("table:customers", "table", "Customers"),
            _row("metric:customers.count", "metric", "Customers", cube="customers", agg="count"),
            _row("table:revenue", "table", "Revenue"),
            _row("metric:revenue.revenue", "metric", "Revenue", cube="revenue", agg="sum"),
        ]
    )
    assert terms["model:table:customers"] == ["customer"]
    assert "model:metric:customers.count" not in terms
    assert terms["model:metric:revenue.revenue"] == ["revenue"]
    assert "model:table:revenue" not in terms


def test_a_title_also_binds_without_its_parenthesised_unit() -> None:
    terms = _by_id([_row("metric:tracks.longest_ms", "metric", "Longest track (ms)", cube="tracks", agg="max")])
    assert "longest track" in terms["model:metric:tracks.longest_ms"]
