"""Processors turn each chunk into exactly one event plus entities (the first pipeline stage).

``FastProcessor`` is deterministic: the event title comes from the heading or the lead
sentence, the content is the chunk condensed, and entities come from capitalised spans,
quoted titles, numbers and dates, glossary terms, table/column names and (for Chinese)
jieba noun words. Chunks that declare their entities in ``meta`` (warehouse rows) keep them.
``LlmProcessor`` asks a DSPy program (see ``_dspy_programs``) and falls back to the fast
processor after retries.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Sequence
from typing import Protocol

from sag_index._text import STOPWORDS, fold, has_cjk, normalize_name, sentences
from sag_index.models import Chunk, Extraction, RawEntity

log = logging.getLogger(__name__)

CONTENT_CHARS = 300
MAX_ENTITIES = 40
_CONNECTORS = r"(?:of|the|de|la|le|du|del|da|von|van|der|for|y|di|al|el|on)"
_CAP_WORD = r"(?:[A-Z][\w'’.\-]*[\w]|[A-Z])"
_CAP_SPAN = re.compile(rf"\b{_CAP_WORD}(?:\s+(?:{_CONNECTORS}\s+)*{_CAP_WORD})*")
_QUOTED = re.compile(r"[\"“「『《]([^\"”」』》]{2,80})[\"”」』》]")
_YEAR = re.compile(r"\b(1[5-9]\d{2}|20\d{2})\b")
_DATE = re.compile(
    r"\b(?:\d{1,2}\s+)?(?:January|February|March|April|May|June|July|August|September|October|November|"
    r"December)(?:\s+\d{1,2})?,?\s+\d{4}\b|\b\d{4}-\d{2}-\d{2}\b|\d{4}年\d{1,2}月(?:\d{1,2}日)?"
)
_IDENT = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?:\.[a-z][a-z0-9_]*)?\b")
_MD_NOISE = re.compile(r"[*_`>|#]+|\[([^\]]*)\]\([^)]*\)")
_CJK_NOUN_FLAGS = frozenset({"n", "nr", "ns", "nt", "nz", "nrt", "nrfg", "vn"})


class Processor(Protocol):
    mode: str

    def process(self, chunks: Sequence[Chunk]) -> list[Extraction]: ...


def condense(text: str, limit: int = CONTENT_CHARS) -> str:
    """The chunk's leading sentences, markdown noise removed, at most ``limit`` characters."""
    clean = _MD_NOISE.sub(lambda m: m.group(1) or " ", text)
    clean = re.sub(r"\s+", " ", clean).strip()
    out = ""
    for sentence in sentences(clean):
        if out and len(out) + len(sentence) + 1 > limit:
            break
        out = f"{out} {sentence}".strip()
    return out[:limit] if out else clean[:limit]


def event_title(chunk: Chunk) -> str:
    if chunk.meta.get("title"):
        return str(chunk.meta["title"])
    if chunk.heading:
        parts = [p.strip() for p in chunk.heading.split(" / ")]
        return f"{parts[0]}: {parts[-1]}" if len(parts) > 1 else parts[0]
    lead = sentences(_MD_NOISE.sub(" ", chunk.text))
    return (lead[0] if lead else chunk.text)[:120].strip()


class FastProcessor:
    """Deterministic extraction: no model calls, a few hundred chunks per second."""

    mode = "fast"

    def __init__(self, glossary: Sequence[str] = ()) -> None:
        terms = {t.strip() for t in glossary if t and len(t.strip()) > 1}
        self._glossary = sorted(terms, key=len, reverse=True)
        self._glossary_re = (
            re.compile(r"(?<![\w])(" + "|".join(re.escape(fold(t)) for t in self._glossary) + r")(?![\w])")
            if self._glossary
            else None
        )

    def process(self, chunks: Sequence[Chunk]) -> list[Extraction]:
        return [self.extract(chunk) for chunk in chunks]

    def extract(self, chunk: Chunk) -> Extraction:
        title = event_title(chunk)
        declared = chunk.meta.get("entities")
        if declared:
            entities = [RawEntity(**e) for e in declared]
            return Extraction(chunk.chunk_id, title, chunk.meta.get("content") or condense(chunk.text), entities)
        subject = chunk.heading.split(" / ")[0].strip() if chunk.heading else title
        entities = self.entities(chunk.text, title, subject)
        return Extraction(chunk.chunk_id, title, condense(chunk.text), entities)

    def _mentions(self, text: str) -> Iterator[tuple[str, str, bool]]:
        """(name, entity type, whether to embed it) of every candidate mention, in priority order."""
        for match in _QUOTED.finditer(text):
            yield match.group(1), "title", True
        for match in _DATE.finditer(text):
            yield match.group(0), "date", False
        for match in _IDENT.finditer(text):
            yield match.group(0), "column" if "_" in match.group(0) else "table", False
        if self._glossary_re is not None:
            for match in self._glossary_re.finditer(fold(text)):
                yield match.group(1), "term", True
        for match in _CAP_SPAN.finditer(text):
            span = _strip_leading_stopwords(match.group(0))
            if span and not span.isdigit():
                yield span, "name", True
        for match in _YEAR.finditer(text):
            yield match.group(0), "date", False
        if has_cjk(text):
            for word in _cjk_nouns(text):
                yield word, "noun", True

    def entities(self, text: str, title: str, subject: str | None = None) -> list[RawEntity]:
        """Entities of ``text``; ``subject`` (the page topic, default the title) is the subject entity."""
        found: dict[str, RawEntity] = {}
        sents = sentences(text) or [text]

        def add(name: str, type_: str, role: str = "mention", embed: bool = True) -> None:
            name = name.strip(" \t\n.,;:'\"()[]")
            key = normalize_name(name)
            if not key or key in STOPWORDS or len(key) < 2 or len(name) > 80 or key in found:
                return
            desc = next((s for s in sents if name in s), title)[:240]
            found[key] = RawEntity(name=name, type=type_, description=desc, role=role, embed=embed)  # type: ignore[arg-type]

        if subject or title:
            add(subject or title, "topic", "subject")
        for name, type_, embed in self._mentions(text):
            add(name, type_, embed=embed)
        return list(found.values())[:MAX_ENTITIES]


def _strip_leading_stopwords(span: str) -> str:
    words = span.split()
    while words and fold(words[0]) in STOPWORDS:
        words = words[1:]
    return " ".join(words)


def _cjk_nouns(text: str) -> list[str]:
    from sag_index._text import _jieba

    _jieba()
    import jieba.posseg as pseg

    out: list[str] = []
    for run in re.findall(r"[\u4e00-\u9fff]+", text):
        for pair in pseg.cut(run):
            if pair.flag in _CJK_NOUN_FLAGS and len(pair.word) >= 2 and pair.word not in STOPWORDS:
                out.append(pair.word)
    return out


def load_glossary(url: str) -> list[str]:
    """Business terms and synonyms from ``semlayer.business_term`` (empty if the table is absent)."""
    from cubesage_core.db import connection, one

    with connection(url) as conn:
        exists = one(conn.execute("SELECT to_regclass('semlayer.business_term')").fetchone())[0]
        if exists is None:
            return []
        rows = conn.execute("SELECT canonical_term, synonyms FROM semlayer.business_term").fetchall()
    terms: list[str] = []
    for canonical, synonyms in rows:
        terms.append(canonical)
        terms.extend(synonyms or [])
    return terms
