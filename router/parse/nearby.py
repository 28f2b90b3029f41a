"""Where things stand relative to each other in a question: the mention right after a mark, the words
between two spans, whether two spans belong to one phrase."""

from __future__ import annotations

import re

from router.parse.language import AMOUNT_WORD
from router.parse.reading import Mark, Mention, Reading, Span
from router.parse.text import Word, within, words

# words that may stand between the parts of one phrase ("average *customer* account balance", "the
# number *of the* orders", "revenue *for each* region"), also the count of the rows named ("each *of the
# three* airports", "*三个*机场")
_FILLER = re.compile(
    r"(?:[\s,'’\-]|\b(?:the|a|an|of|our|their|its|all|each|per|for|in|on|with|that|"
    r"which|who|have|has|had|is|are|was|were|do|does|did|by|to|from|any|every|single|individual|"
    r"的|了|是|有|个|位|家|笔|单|条|名|种|款|张|首)\b|[的了个]|"
    r"\b(?:(?:this|last|next)\s+(?:year|month|quarter|week)|today|yesterday)['’]s\b|"  # "this year's orders"
    r"\bof\s+(?:the|our)\s+(?:two|three|four|five|six|seven|eight|nine|ten|\d+)\b|[两三四五六七八九十]个)*",
    re.IGNORECASE,
)


def between(text: str, a: Span, b: Span) -> str:
    return text[a[1] : b[0]] if a[1] <= b[0] else text[b[1] : a[0]]


def close(text: str, a: Span, b: Span, extra: str = "") -> bool:
    """Only filler words (or ``extra`` words) stand between the two spans."""
    gap = between(text, a, b)
    if extra and re.fullmatch(rf"(?:\s|{extra})*", gap, re.IGNORECASE):
        return True
    return bool(_FILLER.fullmatch(gap)) and len(gap) <= 40


def free(r: Reading, m: Mention | Mark) -> bool:
    return free_span(r, m.span)


def free_span(r: Reading, span: Span) -> bool:
    return not within(span, r.used)


def words_before(text: str, at: int, n: int = 3, reach: int = 30) -> list[Word]:
    """The last ``n`` words within ``reach`` characters before ``at``, spans counted in ``text``
    ("*billed* in the USA", "planes *built* before 1990")."""
    start = max(0, at - reach)
    return [Word(start + w.start, start + w.end, w.raw, w.norm) for w in words(text[start:at])][-n:]


def free_amount_words(r: Reading) -> list[re.Match[str]]:
    """The generic words for an amount of money ("amount", "金额", "钱") no pass has used yet."""
    return [m for m in AMOUNT_WORD.finditer(r.text) if free_span(r, m.span())]


def after(r: Reading, span: Span, mentions: list[Mention] | None = None, extra: str = "") -> Mention | None:
    """The first mention after ``span`` with only filler between them."""
    for m in mentions if mentions is not None else r.mentions:
        if m.start >= span[1]:
            return m if close(r.text, span, m.span, extra) else None
    return None


def before(r: Reading, span: Span, mentions: list[Mention] | None = None, extra: str = "") -> Mention | None:
    """The last mention before ``span`` with only filler between them."""
    found = [m for m in (mentions if mentions is not None else r.mentions) if m.end <= span[0]]
    if found and close(r.text, found[-1].span, span, extra):
        return found[-1]
    return None


def phrase_after(r: Reading, span: Span) -> list[Mention]:
    """The run of mentions that follows ``span`` ("by *customer region*": customer, region), head last."""
    run: list[Mention] = []
    last = span
    for m in r.mentions:
        if m.start < last[1]:
            continue
        if not close(r.text, last, m.span) or (
            run and not re.fullmatch(r"[\s\-'’s]*|\s*的\s*", between(r.text, last, m.span))
        ):
            break
        run.append(m)
        last = m.span
    return run


def mark_before(r: Reading, span: Span, kinds: tuple[str, ...], extra: str = "") -> Mark | None:
    found = [m for m in r.marks if m.kind in kinds and m.end <= span[0]]
    return found[-1] if found and close(r.text, found[-1].span, span, extra) else None


def mark_after(r: Reading, span: Span, kinds: tuple[str, ...], extra: str = "") -> Mark | None:
    found = [m for m in r.marks if m.kind in kinds and m.start >= span[1]]
    return found[0] if found and close(r.text, span, found[0].span, extra) else None


_RESTATED = re.compile(r"\s*,?\s*(?:i\.e\.?|that is|namely|meaning)\s*,?\s*", re.IGNORECASE)


def restated(r: Reading) -> list[Span]:
    """ "came in online, i.e. web + app": the words after "i.e." that follow a segment say again what the
    segment is (to the end of the clause); its values are no filter of their own."""
    out = []
    for m in r.mentions:
        said = _RESTATED.match(r.text, m.end) if m.of("segment") and not m.of("value") else None
        if said:
            end = re.search(r"[?!;。]|$", r.text[said.end() :])
            out.append((said.end(), said.end() + (end.start() if end else 0)))
    return out
