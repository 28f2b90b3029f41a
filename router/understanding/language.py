"""Language detection and text normalisation (full-width -> half-width, whitespace, case kept)."""

from __future__ import annotations

import re
import unicodedata

from router.understanding.types import Language, QuestionError

MIN_CHARS = 2
MAX_CHARS = 1000

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
_SPACES = re.compile(r"\s+")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# chat shorthand written out, so rules need one spelling: "w/ route", "w/o returns"
_SHORTHAND = (
    (re.compile(r"(?<![\w/])w/o(?![\w/])", re.IGNORECASE), "without"),
    (re.compile(r"(?<![\w/])w/(?=\s)", re.IGNORECASE), "with"),
    (re.compile(r"(?<=[a-z])\s*#(?=\s*(?:[,;:.?!)]|and\b|$))", re.IGNORECASE), " number"),  # "flight #", "order#"
    # "on-time % by airline": the rate of what the word names ("what % of", "the %" ask a share)
    (
        re.compile(r"\b(?!(?:what|which|the|a|an|in|by|as|of|per)\b)([a-z][a-z-]*[a-z])\s*%(?!\s*of\b)", re.IGNORECASE),
        r"\1 rate",
    ),
    *(  # lower case only: "last yr", "this qtr", "can u": capitals may be codes ("YR", "U2")
        (re.compile(rf"(?<![\w/'’-]){short}(?![\w/-])"), word)
        for short, word in (
            ("yrs", "years"),
            ("yr", "year"),
            ("qtrs", "quarters"),
            ("qtr", "quarter"),
            ("mths", "months"),
            ("mth", "month"),
            ("wks", "weeks"),
            ("wk", "week"),
            ("sched", "scheduled"),
            ("u", "you"),
            ("ur", "your"),
        )
    ),
)
# Chinese punctuation NFKC leaves alone, mapped to ASCII so rules need one spelling.
_PUNCT = str.maketrans(
    {
        "，": ",",
        "。": ".",
        "、": ",",
        "？": "?",
        "！": "!",
        "：": ":",
        "；": ";",
        "（": "(",
        "）": ")",
        "“": '"',
        "”": '"',
        "‘": "'",
        "’": "'",
        "～": "~",
        "—": "-",
    }
)


def normalize(text: str) -> str:
    """NFKC (full-width digits/letters to ASCII), Chinese punctuation to ASCII, chat shorthand ("w/") in
    words, single spaces."""
    text = unicodedata.normalize("NFKC", text).translate(_PUNCT)
    text = _CONTROL.sub(" ", text)
    for shorthand, words in _SHORTHAND:
        text = shorthand.sub(words, text)
    return _SPACES.sub(" ", text).strip()


def detect_language(text: str) -> Language:
    """ "zh" when the text has any Han characters and at least as many as Latin words, else "en"."""
    han = len(_CJK.findall(text))
    if not han:
        return "en"
    return "zh" if han >= len(_LATIN_WORD.findall(text)) else "en"


def check_question(question: object, *, max_chars: int = MAX_CHARS) -> str:
    """The normalised question, or a QuestionError saying why it cannot be asked."""
    if not isinstance(question, str):
        raise QuestionError("not_text", "The question must be a text string.")
    text = normalize(question)
    if not text:
        raise QuestionError("empty", "The question is empty: ask about the data.")
    if len(question) > max_chars:
        raise QuestionError(
            "too_long", f"The question has {len(question)} characters; the limit is {max_chars}. Shorten it."
        )
    meaningful = len(_CJK.findall(text)) + sum(c.isalnum() for c in text if not _CJK.match(c))
    if meaningful < MIN_CHARS:
        raise QuestionError("too_short", f"The question {text!r} is too short to understand; ask a full question.")
    return text
