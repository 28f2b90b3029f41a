"""Pass: Chinese words the lexicon does not know, named by meaning (``router.parse.nearest``): the words
of the question's Chinese outside every name, language word and time are segmented (jieba), and those
whose nearest model names are near enough become mentions of them."""

from __future__ import annotations

import re

from router.parse.context import Knowledge, Question
from router.parse.language import STOPWORDS_ZH
from router.parse.reading import Mention
from router.parse.text import overlaps
from router.understanding.terms import segment

_CJK_RUN = re.compile(r"[\u3400-\u9fff]+")


def choose(q: Question, k: Knowledge) -> None:
    r = q.reading
    if k.nearest is None:
        return
    taken = [*(m.span for m in r.mentions), *(m.span for m in r.marks), *r.time_spans]
    spans: list[tuple[int, int, str]] = []
    for run in _CJK_RUN.finditer(r.text):
        at = run.start()
        for word in segment(run.group(0)):
            span = (at, at + len(word))
            at += len(word)
            if len(word) >= 2 and word not in STOPWORDS_ZH and not any(overlaps(span, t) for t in taken):
                spans.append((*span, word))
    found = k.nearest([w for _, _, w in spans])
    for (start, end, word), targets in zip(spans, found, strict=True):
        if targets:
            r.mentions.append(Mention(start, end, word, targets, {t: 1 for t in targets}))
            r.notes.append(f"{word!r} read by meaning as {', '.join(t.path for t in targets)}")
    r.mentions.sort(key=lambda m: m.start)
