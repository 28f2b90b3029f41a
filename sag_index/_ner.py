"""Step 1 in fast mode: dictionary NER over the indexed entity names, plus surface mentions.

The dictionary maps normalized entity names to ids. A question is scanned for every token
n-gram (English, up to 8 tokens) and every CJK substring (2..12 characters) that is a known
name; longer matches win over the shorter ones they contain. Capitalised and quoted spans of
the question are returned as free mentions for vector entity recall (Step 2).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from sag_index._text import STOPWORDS, normalize_name
from sag_index.processor import _CAP_SPAN, _QUOTED, _strip_leading_stopwords

_CJK_RUN = re.compile(r"[\u3400-\u9fff]{2,}")
MAX_NGRAM = 8


@dataclass(frozen=True)
class Mention:
    text: str  # normalized surface form
    entity_id: str | None  # set when the dictionary knows it


def candidate_keys(question: str) -> list[str]:
    """Every key :func:`dictionary_mentions` may look up for ``question``: a dictionary restricted to these
    (fetched from an index) finds the same mentions as the whole dictionary."""
    normalized = normalize_name(question)
    tokens = normalized.split()
    keys = [
        " ".join(tokens[i : i + n])
        for n in range(min(MAX_NGRAM, len(tokens)), 0, -1)
        for i in range(len(tokens) - n + 1)
    ]
    keys += [
        run[i : i + n]
        for run in _CJK_RUN.findall(normalized)
        for n in range(min(12, len(run)), 1, -1)
        for i in range(len(run) - n + 1)
    ]
    return list(dict.fromkeys(keys))


def dictionary_mentions(question: str, dictionary: Mapping[str, str]) -> list[Mention]:
    normalized = normalize_name(question)
    tokens = normalized.split()
    spans: list[tuple[int, int, str]] = []  # (start, end) in token or char space, key
    for n in range(min(MAX_NGRAM, len(tokens)), 0, -1):
        for i in range(len(tokens) - n + 1):
            key = " ".join(tokens[i : i + n])
            single_noise = n == 1 and (key in STOPWORDS or len(key) < 2)
            if key in dictionary and not single_noise and not any(s <= i and i + n <= e for s, e, _ in spans):
                spans.append((i, i + n, key))
    found = [Mention(key, dictionary[key]) for _, _, key in spans]
    seen = {m.text for m in found}
    for run in _CJK_RUN.findall(normalized):
        taken: list[tuple[int, int]] = []
        for n in range(min(12, len(run)), 1, -1):
            for i in range(len(run) - n + 1):
                key = run[i : i + n]
                if key in dictionary and key not in STOPWORDS and not any(s <= i and i + n <= e for s, e in taken):
                    taken.append((i, i + n))
                    if key not in seen:
                        seen.add(key)
                        found.append(Mention(key, dictionary[key]))
    return found


def surface_mentions(question: str) -> list[str]:
    """Capitalised and quoted spans of the question (candidates for vector entity recall)."""
    out: list[str] = []
    for match in _QUOTED.finditer(question):
        out.append(match.group(1))
    for match in _CAP_SPAN.finditer(question):
        span = _strip_leading_stopwords(match.group(0))
        if span and normalize_name(span) not in STOPWORDS:
            out.append(span)
    return list(dict.fromkeys(out))


def fast_ner(question: str, dictionary: dict[str, str]) -> tuple[list[str], list[str]]:
    """Step 1 fast: (entity ids the dictionary names in the question, free mentions for vector recall)."""
    found = dictionary_mentions(question, dictionary)
    known = {m.text for m in found}
    free = [s for s in surface_mentions(question) if normalize_name(s) not in known]
    return [m.entity_id for m in found if m.entity_id], free
