"""Calibrated thresholds stored with the index, recomputed for another embedder; CRAG acting on them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cubesage_core import db
from cubesage_core.embeddings import HashEmbedder, get_embedder
from fourengine.calibration import Sample, ensure, fingerprint, load
from fourengine.passages import Passage
from fourengine.retrieve import Retriever
from fourengine.settings import RetrievalSettings

pytestmark = pytest.mark.integration


class Wiki:
    """A passage source whose only section is about the orders table."""

    def __init__(self, text: str) -> None:
        self.text = text

    def passages(self, question: str, limit: int) -> list[Passage]:
        return [Passage("warehouse.fact_order", 1.2, "Orders", "ev1", self.text)][:limit]


@pytest.fixture
def calibrated(fe_url: str) -> Iterator[str]:
    yield fe_url
    with db.connection(fe_url) as conn:  # the other tests of this database run with the seed's thresholds
        conn.execute("DELETE FROM semlayer.calibration")
        conn.execute("DELETE FROM semlayer.calibration_question")


def test_calibration_is_stored_with_the_index_and_follows_the_embedder(calibrated: str) -> None:
    use = get_embedder("use")
    labelled = [
        Sample("GMV by region last month", frozenset({"metric:order_items.gmv"})),
        Sample("who painted the night watch", in_domain=False),
    ]
    with db.connection(calibrated) as conn:
        first, fitted = ensure(conn, use, labelled)
        assert fitted and first.fingerprint == fingerprint(use)
        again, refitted = ensure(conn, use)
        assert not refitted and again.thresholds() == first.thresholds()
        other, refitted = ensure(conn, HashEmbedder())  # another embedder: fitted again, on the stored questions
        assert refitted and other.fingerprint != first.fingerprint and other.stats["labelled"] == 2
        assert load(conn).fingerprint == other.fingerprint
        ensure(conn, use)


def test_retrieval_uses_the_calibrated_thresholds_and_crag_acts(calibrated: str) -> None:
    with db.connection(calibrated) as conn:
        calibration, _ = ensure(conn, get_embedder("use"))
    retriever = Retriever(
        calibrated, RetrievalSettings(), embedder=get_embedder("use"), passages=Wiki("the frobnication of orders")
    )
    wiki = Retriever(calibrated, RetrievalSettings(), embedder=get_embedder("use"), passages=Wiki("blorp orders"))
    try:
        good = retriever.retrieve_sync("GMV by region this quarter")
        assert good.crag.calibration == "calibrated"
        assert good.crag.thresholds["v"] == calibration.v_threshold != RetrievalSettings().threshold
        nonsense = retriever.retrieve_sync("zxqv blorp wibble")
        assert nonsense.crag.grade == "low" and nonsense.crag.decision == "insufficient"
        assert set(nonsense.crag.missing) >= {"zxqv", "blorp"}
        assert nonsense.crag.passages and not nonsense.crag.passages[0]["shares_words"]
        corrected = wiki.retrieve_sync("zxqv blorp wibble")  # nothing in the model, but the wiki shares a word
        assert corrected.crag.grade == "low" and corrected.crag.decision == "corrected"
        assert corrected.crag.final == "medium"
        assert "W" in next(a.sources for a in corrected.assets if a.asset.asset_id == "table:orders")
        seed = Retriever(calibrated, RetrievalSettings(calibrated=False), embedder=get_embedder("use"))
        try:
            assert seed.retrieve_sync("GMV by region this quarter").crag.calibration == "seed"
        finally:
            seed.close()
    finally:
        retriever.close()
        wiki.close()
