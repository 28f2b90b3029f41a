"""Pass: literals the lexicon does not know ("Clerk#000000286", "Supplier#000000135's") looked up in the
warehouse (``router.parse.probe``): where a string dimension holds one, it is a value of that dimension,
and replaces the shorter names found inside it ("Clerk", "Supplier")."""

from __future__ import annotations

from router.parse.context import Knowledge, Question
from router.parse.probe import LITERAL
from router.parse.reading import Mention
from router.parse.text import overlaps


def choose(q: Question, k: Knowledge) -> None:
    r = q.reading
    if k.probe is None:
        return
    for m in LITERAL.finditer(r.text):
        span = m.span()
        if any(overlaps(span, t) for t in r.time_spans) or any(
                x.of("value") and overlaps(span, x.span) for x in r.mentions):
            continue
        targets = k.probe(m.group(0))
        if not targets:
            continue
        r.mentions = [x for x in r.mentions if not overlaps(span, x.span)]
        r.mentions.append(Mention(span[0], span[1], m.group(0), targets, {t: 3 for t in targets}))
        r.mentions.sort(key=lambda x: x.start)
        r.notes.append(f"{m.group(0)!r} found in {', '.join(t.path for t in targets)}")
