"""Pass: literals the lexicon does not know ("Clerk#000000286", "Supplier#000000135's", "ECONOMY ANODIZED
STEEL") looked up in the warehouse (``router.parse.probe``): where a string dimension holds one, it is a
value of that dimension, and replaces the shorter names found inside it ("Clerk", "Supplier"); and
capitalised words derived from one value ("Brazilian suppliers", "German customers": ``value_stems``) or the
last word of values of one column ("Cubs wins": Chicago Cubs), and a
lower-case possessive that is a value's first word ("mesa's flights"); plurals of a value written as one word
("turboprops": Turbo-prop); the first word of several values of one dimension ("JUMBO containers": JUMBO BOX,
JUMBO BAG, ...)."""

from __future__ import annotations

import re
from collections.abc import Callable

from router.parse.context import Knowledge, Question
from router.parse.language import STOPWORDS_EN
from router.parse.lexicon import plural_value, value_head, value_stems, value_tail
from router.parse.probe import CAPS_PHRASE, LITERAL, QUOTED, TITLE_PHRASE
from router.parse.reading import Mention, Target
from router.parse.text import norm_word, overlaps


def _derived(q: Question, k: Knowledge) -> None:
    r = q.reading
    for m in re.finditer(r"\b[A-Z][a-z]{3,}(?:['’]s)?\b|\b[a-z]{4,}['’]s\b|\b[a-z]{3,}(?:ian|an|ese|ish)\b", r.text):
        span, word = m.span(), m.group(0)
        taken = [*(x.span for x in r.mentions), *(x.span for x in r.marks), *r.time_spans]
        if word.lower() in STOPWORDS_EN or any(overlaps(span, t) for t in taken):
            continue
        targets = value_stems(k.lexicon, word)
        # a sentence's first word is capitalised for its place: a name there only as the first word of a value
        # ("Frontier's cancellations") or as its demonym ("Canadian customers"), not by looser derivation
        # so is a name written in lower case with its possessive ("show me mesa's flights"); a lower-case word
        # only as a demonym ("canadian customers")
        loose = word[0].isupper() and r.text[: span[0]].strip()
        plain = word.islower() and not word.endswith(("'s", "’s"))  # "canadian customers": a demonym only
        if targets and (
            _demonym_of(targets, word)
            if plain
            else loose or _first_word_of(targets, word) or _last_word_of(targets, word) or _demonym_of(targets, word)
        ):
            r.mentions.append(Mention(span[0], span[1], word, targets, {t: 2 for t in targets}))
            r.notes.append(f"{word!r} read as {targets[0].value!r} of {targets[0].path}")
    r.mentions.sort(key=lambda x: x.start)


def _last_word_of(targets: list[Target], word: str) -> bool:
    key = norm_word(word)
    return all(str(t.value or "").split()[-1:] and norm_word(str(t.value).split()[-1]) == key for t in targets)


def _first_word_of(targets: list[Target], word: str) -> bool:
    key = norm_word(word)
    return any(str(t.value or "").split()[:1] and norm_word(str(t.value).split()[0]) == key for t in targets)


# a demonym is its place's name, maybe less a final vowel or ending, plus one of these ("Canad-a" ->
# "Canad-ian", "Japan" -> "Japan-ese", "Chil-e" -> "Chile-an", "German-y" -> "German")
_DEMONYM_ENDINGS = ("ian", "an", "n", "ese", "i", "ish", "")
_PLACE_ENDINGS = ("", "a", "e", "o", "y")


def _demonym_of(targets: list[Target], word: str) -> bool:
    """``word`` is the demonym of the one value it derives from ("Canadian" of CANADA), not a word that only
    shares its first letters with one ("Average" and AVERY)."""
    lowered = word.lower()
    return any(_is_demonym(lowered, str(t.value or "").lower()) for t in targets)


def _is_demonym(word: str, place: str) -> bool:
    return any(
        place.endswith(tail)
        and (stem := place[: len(place) - len(tail)])
        and len(stem) >= 4
        and any(word == stem + ending or word == place + ending for ending in _DEMONYM_ENDINGS)
        for tail in _PLACE_ENDINGS
    )


def choose(q: Question, k: Knowledge) -> None:
    if k.probe is not None:
        _probed(q, k)
    _tails(q, k)
    _derived(q, k)
    _plurals(q, k)
    _heads(q, k)


def _heads(q: Question, k: Knowledge) -> None:
    """ "JUMBO containers", "the A330s": the first word of several values of one dimension names them all
    ("top 3" is no head of "3-MEDIUM")."""

    def lookup(word: str) -> list[Target]:
        return [] if word.lower() in STOPWORDS_EN or word.isdigit() else value_head(k.lexicon, word)

    _name_free_words(q, r"(?<![\w#-])[A-Za-z0-9][A-Za-z0-9]*(?![\w#-])", lookup, "the values it begins")


def _tails(q: Question, k: Knowledge) -> None:
    """ "Red Sox": capitalised words that end longer values name them ("Boston Red Sox")."""
    _name_free_words(
        q, r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)+\b", lambda phrase: value_tail(k.lexicon, phrase), "the values it ends"
    )


def _plurals(q: Question, k: Knowledge) -> None:
    """ "any turboprops": a plural of a value written as one word ("Turbo-prop") names that value."""
    _name_free_words(q, r"\b[A-Za-z][\w-]{3,}s\b", lambda word: plural_value(k.lexicon, word), "that value")


def _name_free_words(q: Question, pattern: str, lookup: Callable[[str], list[Target]], how: str) -> None:
    """Each word of ``pattern`` no name, mark or period holds, that ``lookup`` finds values for, names them."""
    r = q.reading
    taken = [*(x.span for x in r.mentions), *(x.span for x in r.marks), *r.time_spans]
    for m in re.finditer(pattern, r.text):
        if any(overlaps(m.span(), t) for t in taken) or not (targets := lookup(m.group(0))):
            continue
        r.mentions.append(Mention(m.start(), m.end(), m.group(0), targets, {t: 2 for t in targets}))
        r.notes.append(
            f"{m.group(0)!r} read as {how}: {', '.join(str(t.value) for t in targets[:3])} of {targets[0].path}"
        )
    r.mentions.sort(key=lambda x: x.start)


def _outside(text: str, cut: Mention, span: tuple[int, int], k: Knowledge) -> list[Mention]:
    """ "the 1-URGENT orders": a name the literal cuts into ("URGENT orders") still names what its words
    outside the literal name ("orders")."""
    out = []
    for start, end in ((cut.start, span[0]), (span[1], cut.end)):
        piece = text[start:end] if start < end else ""
        for m in k.lexicon.find(piece) if piece.strip() else []:
            out.append(Mention(start + m.start, start + m.end, m.text, m.targets, dict(m.weights)))
    return out


def _probed(q: Question, k: Knowledge) -> None:
    r = q.reading
    assert k.probe is not None
    quoted = [(m.start(), m.end(), m.group(0)) for m in QUOTED.finditer(r.text)]
    found = [(m.start(), m.end(), m.group(0)) for p in (LITERAL, CAPS_PHRASE, TITLE_PHRASE) for m in p.finditer(r.text)]
    titles = {m.span() for m in TITLE_PHRASE.finditer(r.text)} | {(s, e) for s, e, _ in quoted}
    for start, end, text in [*quoted, *found]:
        span = (start, end)
        # a known value inside a longer title ("Rock" in "Let There Be Rock") does not stop the longer look-up
        blocked = [
            x
            for x in r.mentions
            if x.of("value")
            and overlaps(span, x.span)
            and (span not in titles or (x.start <= span[0] and span[1] <= x.end))
        ]
        if any(overlaps(span, t) for t in r.time_spans) or blocked:
            continue
        targets = k.probe(text)
        if not targets:
            continue
        cut = [x for x in r.mentions if overlaps(span, x.span)]
        r.mentions = [x for x in r.mentions if not overlaps(span, x.span)]
        r.mentions += [rest for x in cut for rest in _outside(r.text, x, span, k)]
        r.mentions.append(Mention(span[0], span[1], text, targets, {t: 3 for t in targets}))
        r.mentions.sort(key=lambda x: x.start)
        r.notes.append(f"{text!r} found in {', '.join(t.path for t in targets)}")
