"""Words of a question that bind to nothing: not a binding, a row name, a value, a time or a language word.

"Every word that names a measure, value or filter is used or declared": a question whose only evidence is
a value ("the weather in Shanghai") or whose measure had to be guessed ("NPS by region" counted regions)
is refused with the words nothing in the model is called, instead of answered with a number about
something else.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from router.intent import _lexicon as lex
from router.understanding.timeexpr import extract_time
from router.understanding.types import Understanding

_TIME_WORD = re.compile(
    r"today|tomorrow|yesterday|now|tonight|daily|weekly|monthly|quarterly|yearly|annual|"
    r"今天|明天|昨天|现在|今晚|每天|每周|每月|每季度|每年",
    re.IGNORECASE,
)


def _language(term: str, u: Understanding) -> bool:
    return bool(
        lex.PLAIN_VERBS.fullmatch(term)
        or lex.AGGREGATION.fullmatch(term)
        or lex.DETAIL.fullmatch(term)
        or lex.GENERIC_DOMAIN.fullmatch(term)
        or _TIME_WORD.fullmatch(term)
        or extract_time(term, u.today).ranges
    )


def unbound_terms(u: Understanding, known: Iterable[str]) -> list[str]:
    """The question's one-word search terms that none of the ``known`` words (bindings, row names, values,
    group-by phrases) covers and that are not language."""
    covered = [w.lower() for w in known if w]
    covered += [m.group(0).lower() for m in lex.VAGUE.finditer(u.normalized)]
    terms = [t.lower() for t in u.search_terms if " " not in t]
    return [t for t in terms if not any(k in t or t in k for k in covered) and not _language(t, u)]
