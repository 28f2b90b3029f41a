"""Typos in English words, read as the word meant: "revnue" is "revenue", "qaurter" is "quarter".

A word is corrected only when it is written in lower case (or begins the question: "Smells Like Teen Spirit"
is a name), nothing knows it (neither a name of the warehouse, from the lexicon, nor a
word of the language the parser reads: its stopwords and the words of its patterns), it has at least five
letters, is no word of English (a dictionary: "stack" is meant, it is no "stock"), and exactly one known
word with the same first letter is one edit away (a letter dropped, added,
changed, or two neighbours swapped). The corrections are returned so the answer can say how it read them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from spellchecker import SpellChecker

from router.parse import language
from router.parse.lexicon import Lexicon
from router.parse.text import norm_word
from router.understanding import _calendar, comparisons, granularity, ranking, timeexpr

MIN_LENGTH = 5
_WORD = re.compile(r"(?<![\w#@./-])([A-Za-z]{5,})(?![\w#@/-])")
_PATTERN_WORD = re.compile(r"[a-z]{4,}")
_ESCAPE = re.compile(r"\\[a-zA-Z]")  # "\\bacross": "across"
Correction = tuple[str, str]  # (as written, as read)


def language_words() -> set[str]:
    """The English words the parser itself reads: its stopwords and the literal words of its patterns."""
    found = {w.lower() for w in language.STOPWORDS_EN}
    for module in (language, timeexpr, _calendar, comparisons, granularity, ranking):
        for name, value in vars(module).items():
            found.update(_pattern_words(value) if not name.startswith("__") else ())
    return found


def _pattern_words(value: object) -> set[str]:
    """The words of a pattern, a pattern's text or a tuple of them (``language._PATTERNS``)."""
    if isinstance(value, re.Pattern):
        value = value.pattern
    if isinstance(value, str):
        return set(_PATTERN_WORD.findall(_ESCAPE.sub(" ", value).lower())) if "|" in value else set()
    if isinstance(value, tuple | frozenset | set):
        return {w for item in value for w in _pattern_words(item)}
    if isinstance(value, dict):
        return {w for key in value if isinstance(key, str) and key.isalpha() for w in _pattern_words(key + "|")}
    return set()


@dataclass
class Speller:
    """The words one warehouse and the language know, by first letter, for :meth:`correct`."""

    known: set[str] = field(default_factory=set)
    by_initial: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def build(cls, lexicon: Lexicon, extra: Iterable[str] = ()) -> Speller:
        _dictionary()  # loaded with the model, not on the first question
        words = {w for w in (*lexicon.forms, *language_words(), *extra) if w.isalpha() and w.isascii()}
        speller = cls(known=words | set(lexicon.known) | {norm_word(w) for w in words})
        for word in words:
            if len(word) >= MIN_LENGTH - 1:
                speller.by_initial.setdefault(word[0], []).append(word)
        return speller

    def correct(self, text: str) -> tuple[str, list[Correction]]:
        """``text`` with each unknown word that has one likely intended word replaced, and the corrections."""
        fixes: list[Correction] = []

        def fix(m: re.Match[str]) -> str:
            raw = m.group(1)
            meant = self._meant(raw) if raw[0].islower() or not text[: m.start()].strip() else None
            if meant is None:
                return raw
            fixes.append((raw, meant))
            return meant

        return _WORD.sub(fix, text), fixes

    def _meant(self, raw: str) -> str | None:
        word = raw.lower()
        if raw.isupper() or word in self.known or norm_word(word) in self.known or english(word):
            return None  # "JUMBO", a name, a word the parser reads, or an English word ("stack", not "stock")
        near = {w for w in self.by_initial.get(word[0], ()) if one_edit(word, w)}
        meant = {norm_word(w) for w in near}
        if len(meant) != 1:
            return None
        return min(near, key=lambda w: (len(w) != len(word), len(w), w))  # "ordres": "orders", not "order"


@lru_cache(maxsize=1)
def _dictionary() -> SpellChecker:
    return SpellChecker(language="en", distance=1)


def english(word: str) -> bool:
    """``word`` is a word of English (pyspellchecker's dictionary): written as meant, not a typo."""
    return word in _dictionary()


def one_edit(a: str, b: str) -> bool:
    """One letter dropped, added or changed, or two neighbours swapped, turns ``a`` into ``b``."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        swapped = len(diff) == 2 and diff[1] == diff[0] + 1 and (a[diff[0]], a[diff[1]]) == (b[diff[1]], b[diff[0]])
        return len(diff) == 1 or swapped
    short, long = (a, b) if len(a) < len(b) else (b, a)
    i = next((i for i, (x, y) in enumerate(zip(short, long, strict=False)) if x != y), len(short))
    return short[i:] == long[i + 1 :]
