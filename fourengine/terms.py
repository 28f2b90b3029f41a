"""Search terms and the normalisation that engine R matches on.

``normalise`` maps a term to its match key: NFKC, lower case, separators to
spaces, English words singularised. Loaders store the keys of every canonical
term and synonym (``business_term.lexemes``); the retriever normalises search
terms the same way, so "Singers", "singer" and "SINGER_" meet.
``default_search_terms`` is for callers without query understanding: jieba
segments (and adjacent pairs) for Chinese, word 1-3 grams for English.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from functools import lru_cache

_SEPARATORS = re.compile(r"[_\-/.,;:!?()\[\]{}\"'`“”‘’，。？！：；、（）《》]+")
_SPACES = re.compile(r"\s+")
_CJK = re.compile(r"[\u3400-\u9fff]")
_WORD = re.compile(r"[a-z0-9]+|[\u3400-\u9fff]+")
STOPWORDS = frozenset(
    (
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "from",
        "by",
        "with",
        "and",
        "or",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "do",
        "does",
        "did",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "how",
        "many",
        "much",
        "show",
        "list",
        "give",
        "me",
        "all",
        "each",
        "every",
        "there",
        "their",
        "its",
        "it",
        "this",
        "that",
        "these",
        "those",
        "as",
        "than",
        "then",
        "please",
        "find",
        "get",
        "tell",
        "return",
        "number",
        "we",
        "you",
        "i",
        "our",
        "us",
        "has",
        "have",
        "had",
        "can",
        "could",
        "would",
        "should",
        "will",
        "about",
    )
)
CJK_STOPWORDS = frozenset(
    (
        "的",
        "了",
        "是",
        "在",
        "和",
        "与",
        "及",
        "按",
        "每个",
        "各",
        "多少",
        "哪些",
        "什么",
        "怎么",
        "请",
        "给",
        "我",
        "列出",
        "显示",
        "查询",
        "一下",
        "有",
    )
)


def has_cjk(text: str) -> bool:
    return bool(_CJK.search(text))


@lru_cache(maxsize=65536)
def singular(word: str) -> str:
    """A light English singulariser (no dictionary): cities -> city, boxes -> box, singers -> singer."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes", "zes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


@lru_cache(maxsize=65536)
def normalise(text: str) -> str:
    """The match key of a term."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = _SPACES.sub(" ", _SEPARATORS.sub(" ", text)).strip()
    return " ".join(singular(w) if w.isascii() else w for w in text.split(" ") if w)


def words(text: str) -> list[str]:
    """Normalised English words and raw CJK runs of ``text``."""
    return [singular(w) if w.isascii() else w for w in _WORD.findall(unicodedata.normalize("NFKC", text).lower())]


def _segments(text: str) -> list[str]:
    import logging

    import jieba

    jieba.setLogLevel(logging.WARNING)
    return [s.strip() for s in jieba.lcut(text) if s.strip()]


def default_search_terms(question: str, max_n: int = 3) -> list[str]:
    """Search terms from a question: jieba segments (and joined neighbours) plus English word n-grams."""
    text = unicodedata.normalize("NFKC", question).lower()
    terms: list[str] = []
    if has_cjk(text):
        segs = [s for s in _segments(text) if _WORD.fullmatch(s) and s not in CJK_STOPWORDS]
        cjk = [s for s in segs if has_cjk(s)]
        terms.extend(cjk)
        terms.extend(a + b for a, b in itertools.pairwise(cjk))
    tokens = [w for w in _WORD.findall(text) if not has_cjk(w)]
    for n in range(1, max_n + 1):
        for i in range(len(tokens) - n + 1):
            gram = tokens[i : i + n]
            if gram[0] in STOPWORDS or gram[-1] in STOPWORDS:
                continue
            terms.append(" ".join(gram))
    seen: set[str] = set()
    out: list[str] = []
    for term in terms:
        key = normalise(term)
        if key and key not in seen:
            seen.add(key)
            out.append(key)
    return out
