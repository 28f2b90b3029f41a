"""Text normalisation and tokenisation shared by indexing, BM25 and NER.

English: lower-cased word tokens, a small stop-word list, no stemming. Chinese runs are
segmented with jieba (search mode). The same tokens feed PostgreSQL's BM25 postings and
Elasticsearch's whitespace-analysed fields, so both backends rank the same terms.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from functools import lru_cache

STOPWORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "being",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "me",
        "more",
        "most",
        "my",
        "no",
        "nor",
        "not",
        "of",
        "on",
        "or",
        "our",
        "ours",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "also",
        "about",
        "after",
        "before",
        "both",
        "each",
        "few",
        "further",
        "here",
        "just",
        "only",
        "other",
        "own",
        "same",
        "over",
        "under",
        "again",
        "once",
        "all",
        "any",
        "between",
        "during",
        "up",
        "down",
        "out",
        "off",
        "above",
        "below",
        "until",
        "because",
        "against",
        "whose",
        "的",
        "了",
        "和",
        "是",
        "在",
        "有",
        "与",
        "及",
        "或",
        "这",
        "那",
        "哪",
        "个",
        "些",
        "吗",
        "呢",
        "吧",
        "啊",
        "把",
        "被",
        "对",
        "从",
        "向",
        "为",
        "以",
        "就",
        "都",
        "也",
        "还",
        "又",
        "并",
        "等",
        "中",
        "上",
        "下",
        "什么",
        "哪些",
        "哪个",
        "怎么",
        "多少",
        "一个",
        "我们",
        "你们",
        "他们",
        "请",
        "给",
        "查询",
        "显示",
        "列出",
    }
)

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_RUN = re.compile(f"[{_CJK}]+")
_TOKEN = re.compile(f"[{_CJK}]+|[0-9]+(?:[.,][0-9]+)*|[^\\W_]+(?:[_'][^\\W_]+)*", re.UNICODE)
_HAS_CJK = re.compile(f"[{_CJK}]")
_PAREN = re.compile(r"\s*[(（][^)）]*[)）]\s*")
_SPACES = re.compile(r"\s+")


def has_cjk(text: str) -> bool:
    return bool(_HAS_CJK.search(text))


def fold(text: str) -> str:
    """Lower-case, strip accents (Alû -> alu), unify width; keeps CJK as is."""
    if text.isascii():
        return text.lower()
    text = unicodedata.normalize("NFKC", text)
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return unicodedata.normalize("NFC", stripped).lower()


@lru_cache(maxsize=1)
def _jieba():
    import logging

    import jieba

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    return jieba


def warm_up() -> None:
    """Load jieba's dictionaries now (about 1 s) rather than inside the first indexing batch."""
    import jieba.posseg

    _jieba()
    list(jieba.posseg.cut("今天北京的天气很好"))


def segment_cjk(run: str) -> list[str]:
    """jieba search-mode words of one CJK run (single characters dropped unless the run is one)."""
    if len(run) <= 2:
        return [run]
    words = [w for w in _jieba().cut_for_search(run) if len(w) > 1]
    return words or [run]


def tokenize(text: str, keep_stopwords: bool = False) -> list[str]:
    """Search tokens of ``text`` (folded, stop words dropped unless asked)."""
    folded = fold(text)
    if not _HAS_CJK.search(folded):  # no run to segment: the tokens are the matches (most texts; fast)
        tokens: list[str] = _TOKEN.findall(folded)
        return tokens if keep_stopwords else [t for t in tokens if t not in STOPWORDS]
    out: list[str] = []
    for match in _TOKEN.finditer(folded):
        token = match.group(0)
        if _CJK_RUN.fullmatch(token):
            out.extend(w for w in segment_cjk(token) if keep_stopwords or w not in STOPWORDS)
        elif keep_stopwords or token not in STOPWORDS:
            out.append(token)
    return out


@lru_cache(maxsize=1 << 16)
def normalize_name(name: str) -> str:
    """Canonical key of an entity name: folded, parenthetical qualifiers and punctuation removed.

    ``Lilu (mythology)`` -> ``lilu``; ``"Harbor Library"`` -> ``harbor library``. Memoised: indexing asks for
    the key of each mention three times (processor, filter, parser), and names recur across chunks.
    """
    text = _PAREN.sub(" ", fold(name)).strip() or fold(name)
    tokens = _TOKEN.findall(text)
    return _SPACES.sub(" ", " ".join(tokens)).strip()


def stable_id(*parts: str, size: int = 16) -> str:
    """A short content hash (hex) of the given parts: stable across runs and machines."""
    digest = hashlib.blake2b(digest_size=size)
    for part in parts:
        digest.update(part.encode())
        digest.update(b"\x1f")
    return digest.hexdigest()


def sentences(text: str) -> list[str]:
    """Split prose into sentences (English punctuation and Chinese 。！？；)."""
    parts = re.split(r"(?<=[.!?。！？；])\s+|(?<=[。！？；])|\n{2,}", text.strip())
    return [p.strip() for p in parts if p and p.strip()]
