"""Names in other words, by meaning: the model's English names nearest a Chinese word the lexicon does not
know ("零件" -> Parts, "账户余额" -> Customer / Supplier account balance), by the cosine of their sentence
embeddings (``cubesage_core.embeddings``; USE multilingual by default).

Only for Chinese: across languages the embedder places a word near its translation, while within English
it confuses opposites ("departure airport" lies nearer "Destination airport" than "Origin airport"). A
word is taken when its best name is at least ``THRESHOLD`` similar; every name within ``MARGIN`` of the
best is kept as a target, so the question's other words choose among them (customer or supplier).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from router.parse.reading import Target, member_kinds
from router.parse.text import has_cjk

THRESHOLD = 0.78
MARGIN = 0.04


class Embedder(Protocol):
    def embed(self, texts: list[str]) -> np.ndarray: ...


@dataclass
class Nearest:
    embedder: Embedder
    targets: list[Target]
    vectors: np.ndarray  # one unit row per target name

    @classmethod
    def build(cls, model: Any, embedder: Embedder) -> Nearest:
        names: list[tuple[str, Target]] = []
        for cube in model.cubes.values():
            if cube.title and not has_cjk(cube.title):
                names.append((cube.title, Target("cube", cube.name)))
            for kind, members in member_kinds(cube):
                for member in members.values():
                    if getattr(member, "public", True) and member.title and not has_cjk(member.title):
                        names.append((member.title, Target(kind, member.path)))
        vectors = np.asarray(embedder.embed([n for n, _ in names]), dtype=np.float32) if names else np.zeros((0, 1))
        if len(vectors):
            vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
        return cls(embedder, [t for _, t in names], vectors)

    def find(self, words: list[str]) -> list[list[Target]]:
        """Per word, the targets of the names nearest it (empty: none is near enough)."""
        if not words or not len(self.vectors):
            return [[] for _ in words]
        asked = np.asarray(self.embedder.embed(words), dtype=np.float32)
        asked /= np.maximum(np.linalg.norm(asked, axis=1, keepdims=True), 1e-9)
        out = []
        for scores in asked @ self.vectors.T:
            best = float(scores.max())
            out.append(
                []
                if best < THRESHOLD
                else [self.targets[i] for i in np.argsort(-scores) if scores[i] >= best - MARGIN][:4]
            )
        return out
