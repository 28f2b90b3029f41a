"""Glossary and few-shot loaders against real PostgreSQL: idempotence, ingest, approve/reject."""

from __future__ import annotations

import pytest

from cubesage_core.db import connection
from cubesage_core.embeddings import get_embedder
from cubesage_core.settings import REPO_ROOT
from fourengine.fewshot_cache import FewShotError, add_example, approve, load_few_shots, reject
from fourengine.glossary import GlossaryError, ingest_text, load_glossary
from fourengine.retrieve import Retriever

pytestmark = pytest.mark.integration


def _count(url: str, sql: str) -> int:
    with connection(url) as conn:
        return int(conn.execute(sql).fetchone()[0])


def test_glossary_load_is_idempotent_and_touches_only_terms_and_rules(fe_url: str) -> None:
    others = "SELECT count(*) FROM semlayer.asset WHERE asset_type NOT IN ('term', 'business_rule')"
    before = (_count(fe_url, "SELECT count(*) FROM semlayer.business_term"), _count(fe_url, others))
    report = load_glossary(fe_url, REPO_ROOT / "demo" / "glossary.yaml", embedder=get_embedder("use"))
    assert report.terms >= 40 and report.business_rules >= 1
    assert report.embedded == 0 and report.removed == 0  # nothing changed since the fixture loaded it
    assert report.unresolved == []  # every term maps to an exported asset
    assert (_count(fe_url, "SELECT count(*) FROM semlayer.business_term"), _count(fe_url, others)) == before
    rules = _count(
        fe_url,
        "SELECT count(*) FROM semlayer.asset a JOIN semlayer.asset_embedding USING (asset_id) "
        "WHERE a.asset_type = 'business_rule'",
    )
    assert rules == report.business_rules


def test_ingest_csv_upserts_a_term_that_binds(fe_url: str) -> None:
    csv_text = (
        "id,term,maps_to,synonyms,language,definition,filter_value\n"
        "it_turnover,turnover,metric:order_items.gmv,流水|takings,en,test synonym of GMV,\n"
    )
    out = ingest_text(fe_url, csv_text, "csv", embedder=get_embedder("use"))
    assert out["terms"] == 1
    r = Retriever(fe_url, embedder=get_embedder("use"))
    try:
        result = r.retrieve_sync("本月流水")
    finally:
        r.close()
    assert any(b.term_id == "it_turnover" for b in result.term_bindings)


def test_bad_glossary_input_is_a_typed_error(fe_url: str) -> None:
    with pytest.raises(GlossaryError):
        ingest_text(fe_url, "terms: [{id: x, term: y, maps_to: nonsense}]", "yaml")
    with pytest.raises(GlossaryError):
        ingest_text(fe_url, "{{{", "yaml")
    with pytest.raises(GlossaryError):
        ingest_text(fe_url, "x", "xml")


def test_few_shots_reload_keeps_rows_and_hits(fe_url: str) -> None:
    n = _count(fe_url, "SELECT count(*) FROM semlayer.dynamic_few_shot_cache")
    report = load_few_shots(fe_url, REPO_ROOT / "demo" / "few_shots.yaml", embedder=get_embedder("use"))
    assert report.examples >= 15 and report.inserted == 0
    assert _count(fe_url, "SELECT count(*) FROM semlayer.dynamic_few_shot_cache") == n


def test_add_approve_reject_controls_engine_d(fe_url: str) -> None:
    question = "Cancelled orders by payment method in 2024"
    query = {"measures": ["orders.cancelled_count"], "dimensions": ["payments.method"]}
    example_id = add_example(fe_url, question, cube_query=query, embedder=get_embedder("use"))
    r = Retriever(fe_url, embedder=get_embedder("use"))
    try:
        assert not [f for f in r.retrieve_sync(question).few_shots if f.id == example_id]  # not approved yet
        approve(fe_url, example_id)
        hit = [f for f in r.retrieve_sync(question).few_shots if f.id == example_id]
        assert hit and hit[0].cache_hit and hit[0].cube_query == query
        reject(fe_url, example_id)
        assert not [f for f in r.retrieve_sync(question).few_shots if f.id == example_id]
    finally:
        r.close()
    with pytest.raises(FewShotError):
        approve(fe_url, 987654321)
    with pytest.raises(FewShotError):
        add_example(fe_url, "  ", cube_query=query)
