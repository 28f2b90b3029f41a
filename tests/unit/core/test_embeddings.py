"""UseEmbedder's batching: big batches are encoded in slices on several threads, in order (fake model)."""

from __future__ import annotations

import threading

import numpy as np

from cubesage_core.embeddings import DIM, UseEmbedder


class FakeUse:
    """Encodes text i as a vector with 1 at position len(text) % DIM; records the threads it ran on."""

    def __init__(self) -> None:
        self.threads: set[str] = set()

    def encode(self, texts: list[str]) -> np.ndarray:
        self.threads.add(threading.current_thread().name)
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        out[np.arange(len(texts)), [len(t) % DIM for t in texts]] = 2.0
        return out


def test_a_big_batch_is_split_across_threads_and_keeps_its_order() -> None:
    embedder = UseEmbedder(workers=2)
    embedder._model = FakeUse()
    texts = ["x" * n for n in range(1, 200)]
    vectors = embedder.embed(texts)
    assert vectors.shape == (199, DIM)
    assert [int(v.argmax()) for v in vectors] == [len(t) for t in texts]
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert len(embedder._model.threads) == 2


def test_a_small_batch_and_a_single_worker_stay_on_the_calling_thread() -> None:
    for workers, n in ((2, UseEmbedder.SPLIT_AT - 1), (1, 500)):
        embedder = UseEmbedder(workers=workers)
        embedder._model = FakeUse()
        assert embedder.embed(["ab"] * n).shape == (n, DIM)
        assert embedder._model.threads == {threading.current_thread().name}


def test_a_big_hash_batch_gives_the_vectors_of_one_text_at_a_time() -> None:
    from cubesage_core.embeddings import HashEmbedder, _hash_vector

    texts = [f"Customer#{n:09d}" for n in range(300)] + ["兰州 Lanzhou", "Alû", "", "a", "ab", "😀 x"] * 60
    embedder = HashEmbedder()
    assert len(texts) >= HashEmbedder.BULK_AT
    embedder.SLICE = 256  # several slices
    bulk = embedder.embed(texts)
    assert np.array_equal(bulk, np.stack([_hash_vector(t.lower()) for t in texts]))
    assert np.array_equal(bulk[:5], embedder.embed(texts[:5]))
    assert not bulk[texts.index("")].any()
