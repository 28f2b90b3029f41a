"""`cubesage init` on a fresh database holding Chinook, with the pack's hand-written models, glossary and wiki
(as a user with their own models runs it); questions through the HTTP API, answers checked against SQL."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import psycopg
import pytest

from answer.keys import create_key
from cubesage_core.embedded_pg import EmbeddedPostgres
from tests.integration.init._own import Case, check, fresh_database, initialised_api
from tests.live_api import LiveApi
from warehouses.packs import get_pack

pytestmark = pytest.mark.integration
PACK = get_pack("chinook")
SALES = "sum(il.unit_price * il.quantity)"

CASES = [
    Case(
        "Sales by billing country",
        "aggregate",
        f"SELECT i.billing_country, {SALES} FROM chinook.invoice_line il JOIN chinook.invoice i USING (invoice_id) "
        "GROUP BY 1",
        ("billing_country", "invoice_lines.sales"),
    ),
    Case(
        "每个国家的销售额",
        "aggregate",
        f"SELECT i.billing_country, {SALES} FROM chinook.invoice_line il JOIN chinook.invoice i USING (invoice_id) "
        "GROUP BY 1",
        ("billing_country", "invoice_lines.sales"),
    ),
    Case(
        "Sales by year",
        "aggregate",
        f"SELECT to_char(date_trunc('year', i.invoice_date), 'YYYY-MM-DD'), {SALES} FROM chinook.invoice_line il "
        "JOIN chinook.invoice i USING (invoice_id) GROUP BY 1",
        ("invoice_date.year", "invoice_lines.sales"),
    ),
    Case(
        "How many tracks by genre?",
        "aggregate",
        "SELECT g.name, count(*) FROM chinook.track t JOIN chinook.genre g USING (genre_id) GROUP BY 1",
        ("genre_name", "tracks.count"),
    ),
    Case(
        "Average track length (minutes) by media type",
        "aggregate",
        "SELECT m.name, avg(t.milliseconds) / 60000.0 FROM chinook.track t JOIN chinook.media_type m "
        "USING (media_type_id) GROUP BY 1",
        ("media_type_name", "avg_length_minutes"),
    ),
    Case(
        "top 5 artists by sales",
        "aggregate",
        f"SELECT ar.name, {SALES} FROM chinook.invoice_line il JOIN chinook.track t USING (track_id) "
        "JOIN chinook.album al USING (album_id) JOIN chinook.artist ar USING (artist_id) "
        "GROUP BY 1 ORDER BY 2 DESC LIMIT 5",
        ("artist_name", "invoice_lines.sales"),
    ),
    Case(
        "list the invoices of customer Luís Gonçalves",
        "detail",
        "SELECT i.invoice_id FROM chinook.invoice i JOIN chinook.customer c USING (customer_id) "
        "WHERE c.first_name = 'Luís' AND c.last_name = 'Gonçalves'",
        ("invoice_id",),
    ),
    Case(
        "list the tracks of the playlist Grunge",
        "detail",
        "SELECT pt.track_id FROM chinook.playlist_track pt JOIN chinook.playlist p USING (playlist_id) "
        "WHERE p.name = 'Grunge'",
        ("track_id",),
    ),
]


@pytest.fixture(scope="module")
def chinook_url(pg_server: EmbeddedPostgres) -> Iterator[str]:
    with fresh_database(pg_server, "init_chinook") as url:
        PACK.loader()(url, PACK.schema)
        yield url


@pytest.fixture(scope="module")
def api(chinook_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveApi]:
    work = tmp_path_factory.mktemp("chinook-own")
    args = [
        "--schema",
        PACK.schema,
        "--models",
        str(PACK.model_dir),
        "--glossary",
        str(PACK.glossary),
        "--wiki",
        str(PACK.wiki_dir),
    ]
    with initialised_api(chinook_url, work, args) as live:
        yield live


def test_the_catalog_is_the_packs_model(api: LiveApi) -> None:
    catalog = httpx.get(f"{api.url}/v1/catalog", timeout=30).json()
    assert "invoice_lines.sales" in str(catalog) and "order_items" not in str(catalog)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_answers_match_sql(api: LiveApi, chinook_url: str, case: Case) -> None:
    check(api, chinook_url, case)


def test_a_prose_page_ingested_through_the_api_is_linked_and_an_edit_replaces_it(
    api: LiveApi, chinook_url: str
) -> None:
    """A page naming no table exactly is linked by the model's and glossary's nouns (歌曲 -> tracks, 专辑 ->
    albums); sending the page again with other sections removes the old ones."""
    _, token = create_key(chinook_url, f"wiki-{uuid.uuid4().hex[:6]}", ["ingest"])
    name = f"library-{uuid.uuid4().hex[:6]}.md"

    def ingest(content: str) -> dict[str, object]:
        response = httpx.post(
            f"{api.url}/v1/ingest/wiki",
            headers={"Authorization": f"Bearer {token}"},
            json={"documents": [{"name": name, "content": content}]},
            timeout=120,
        )
        assert response.status_code == 200, response.text
        return response.json()

    def sections() -> dict[str, list[str]]:
        with psycopg.connect(chinook_url) as conn:
            rows = conn.execute(
                "SELECT heading, meta->'tables' FROM sag.source_chunk WHERE source = %s", (f"wiki:{name}",)
            ).fetchall()
        return {heading: tables for heading, tables in rows}

    first = ingest("# 曲库说明\n\n每首歌曲都属于一张专辑。\n\n## 价格\n\n单曲价格为 0.99 或 1.99。\n")
    assert first["added"] == 2
    linked = sections()
    assert set(linked) == {"曲库说明", "曲库说明 / 价格"}
    assert all(set(tables) == {"chinook.track", "chinook.album"} for tables in linked.values()), linked
    edited = ingest("# 曲库说明\n\n每首歌曲都属于一张专辑，专辑属于一位艺术家。\n")
    assert edited["added"] == 1 and edited["removed"] == 2
    assert set(sections()) == {"曲库说明"}
    assert set(sections()["曲库说明"]) == {"chinook.track", "chinook.album", "chinook.artist"}
