"""Pass 1: find what every span of the question names: time expressions (used by the understanding),
language marks, model names (the lexicon), rows the pipeline recognised, and "<time dimension> <grain>"
phrases ("per ship year", "by order month")."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from router.parse import language
from router.parse.context import Knowledge, Question
from router.parse.lexicon import lower_case_reference
from router.parse.reading import Mark, Mention, Reading
from router.parse.text import name_key, overlaps, stems
from router.understanding.granularity import extract_granularity
from router.understanding.ranking import ZH_CLASSIFIERS
from router.understanding.timeexpr import extract_time

_GRAIN_WORDS = {
    "year": "year",
    "month": "month",
    "quarter": "quarter",
    "week": "week",
    "day": "day",
    "yearly": "year",
    "monthly": "month",
    "quarterly": "quarter",
    "weekly": "week",
    "daily": "day",
}
_NOT_A_DIMENSION = stems("per by each every the this last next same")
_DIM_GRAIN = re.compile(
    r"\b([a-z]+)\s+(years?|months?|quarters?|weeks?|days?)\b|"
    r"\b(years?|months?|quarters?|weeks?|days?)\s+of\s+(?:the\s+)?([a-z]+)\b",
    re.IGNORECASE,
)


# "..., and its 10 largest orders that quarter", "当天": the question's own period said again
_SAME_PERIOD = re.compile(
    r"\b(?:that|the same|this same)\s+(?:day|date|week|month|quarter|year|period)\b|当天|当月|当季|当年|同期",
    re.IGNORECASE,
)


def _time_spans(r: Reading) -> list[tuple[int, int]]:
    parsed = extract_time(r.text, r.today)
    grain, grain_spans = extract_granularity(r.text, parsed.ranges[0] if parsed.ranges else None)
    again = [m.span() for m in _SAME_PERIOD.finditer(r.text)] if parsed.ranges or grain else []
    return [*parsed.spans, *grain_spans, *again]


def _dimension_grains(r: Reading, k: Knowledge) -> list[Mark]:
    """ "per ship year" -> (year, lineitem.ship_date): a word of one time dimension's title beside a grain."""
    out = []
    for m in _DIM_GRAIN.finditer(r.text):
        word, grain = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        key = name_key(word)
        if not key or key[0] in _NOT_A_DIMENSION:
            continue
        dims = [
            d.path
            for d in k.model.dimensions()
            if d.type == "time"
            and d.public
            and key[0] in set(name_key(d.title or "")) | set(name_key(d.name)) - {"date", "time"}
        ]
        if len(dims) == 1:
            out.append(
                Mark("dim_grain", m.start(), m.end(), m.group(0), (_GRAIN_WORDS[grain.lower().rstrip("s")], dims[0]))
            )
    return out


_NAME_GOES_ON = re.compile(r" [A-Z][a-z]")


def _row_mentions(q: Question, taken: list[Mention]) -> list[Mention]:
    """The rows the pipeline recognised (by name), where their label stands in the question."""
    out: list[Mention] = []
    lowered = q.reading.text.lower()
    for label, target in q.rows:
        at = lowered.find(label.lower())
        if at < 0 or not label.strip():
            continue
        if " " not in label.strip() and q.reading.text[at : at + len(label)] != label and label.isascii():
            continue  # a one-word name ("Money", "Help") is a row only where it is written as the name
        if lower_case_reference(q.reading.text[at : at + len(label)], label):
            continue
        if _NAME_GOES_ON.match(q.reading.text, at + len(label)):
            continue  # "Frank" is not the row "Frank" when the question says "Frank Harris"
        span = (at, at + len(label))
        same = next((m for m in out if m.span == span), None)
        if same is not None:  # one name, several rows ("Let There Be Rock": an album and a track)
            same.targets.append(target)
            same.weights[target] = 3
            continue
        if any(overlaps(span, m.span) and (m.end - m.start) > len(label) for m in taken + out):
            continue
        out.append(Mention(span[0], span[1], q.reading.text[span[0] : span[1]], [target], {target: 3}))
    return out


def _widen_to_value(text: str, m: Mention) -> None:
    """ "the 5-LOW priority orders": a value found by part of its words covers the whole value where the
    question writes it."""
    lowered = text.lower()
    for t in m.of("value"):
        value = str(t.value or "").lower()
        at = lowered.find(value, max(0, m.start - len(value)))
        if (
            value
            and 0 <= at <= m.start < at + len(value)
            and at + len(value) > m.start
            and (at < m.start or at + len(value) > m.end)
        ):
            m.start, m.end = min(m.start, at), max(m.end, at + len(value))
            m.text = text[m.start : m.end]
            return


def _language_marks(text: str, free: list[tuple[int, int]]) -> list[Mark]:
    """The language spans outside dates and grains; one reaching into a date keeps what it says of the same
    kind outside it ("和2009年相比": "相比")."""
    out: list[Mark] = []
    for mark in language.marks(text):
        taken = sorted(t for t in free if overlaps(mark.span, t))
        if not taken:
            out.append(mark)
            continue
        bounds = [mark.start, *(x for t in taken for x in t), mark.end]
        for start, end in zip(bounds[::2], bounds[1::2], strict=True):
            pieces = language.marks(text[start:end]) if start < end else []
            out += [Mark(m.kind, start + m.start, start + m.end, m.text, m.data) for m in pieces if m.kind == mark.kind]
    return out


_JOINED_BEFORE = re.compile(r"\b([A-Za-z]+)\s*(?:,|and|or|&)\s+$")


def _shared_heads(text: str, names: list[Mention], k: Knowledge) -> list[Mention]:
    """ "the departure and arrival delays": a word joined by and/or to a name of two or more words, with
    that name's last words, names what "<word> <last words>" names ("departure delay"), in place of what
    the word alone names."""
    out = list(names)
    for m in names:
        rest = m.text.split()[1:]
        found = _JOINED_BEFORE.search(text[: m.start]) if rest else None
        if found is None or any(overlaps(found.span(1), x.span) and x.span != found.span(1) for x in names):
            continue
        phrase = " ".join([found.group(1), *rest])
        whole = [x for x in k.lexicon.find(phrase) if x.span == (0, len(phrase))]
        if whole:
            out = [x for x in out if x.span != found.span(1)]
            out.append(Mention(found.start(1), found.end(1), found.group(1), whole[0].targets, dict(whole[0].weights)))
    return out


_UNITS = ("year", "quarter", "month", "week", "day")
_RELATIVE = r"(last|this|previous|next|current|past)"
_PERIOD_WORD = re.compile(r"[a-z]{3,}|[\u4e00-\u9fff]{2,3}")
# "上个赛季", "本赛季": the Chinese relative words, as the English one they say
_RELATIVE_ZH = {
    "上个": "last",
    "上一个": "last",
    "上一": "last",
    "上": "last",
    "本": "this",
    "这个": "this",
    "这一": "this",
    "今": "this",
    "下个": "next",
    "下一个": "next",
    "下": "next",
}
_RELATIVE_ZH_SAID = "|".join(sorted(_RELATIVE_ZH, key=len, reverse=True))  # the longest first: 上一个 before 上


def _names(dim: Any) -> set[str]:
    return {str(n).lower() for n in [dim.title or dim.name, *(dim.meta.get("synonyms") or [])]}


def calendar_unit(dim: Any) -> str | None:
    """The calendar word the model also calls a time dimension ("Season", synonym "year": year), else None."""
    names = _names(dim)
    return next((u for u in _UNITS if u in names), None)


def _period_words(k: Knowledge) -> dict[str, str | None]:
    """One-word names of time dimensions ("season") -> the calendar word the model also calls one of them
    ("year"), else None."""
    out: dict[str, str | None] = {}
    for dim in (d for d in k.model.dimensions() if d.type == "time" and d.public):
        names, unit = _names(dim), calendar_unit(dim)
        for word in (n for n in names if _PERIOD_WORD.fullmatch(n) and n not in (*_UNITS, "date", "time")):
            out[word] = out.get(word) or unit
    return out


def _relative_periods(text: str, word: str) -> list[re.Match[str]]:
    if word.isascii():
        return list(re.finditer(rf"\b{_RELATIVE}\s+{word}s?\b", text, re.IGNORECASE))
    return list(re.finditer(rf"({_RELATIVE_ZH_SAID}){re.escape(word)}", text))


def _model_periods(q: Question, k: Knowledge) -> list[tuple[int, int]]:
    """ "last season" where the model names a time dimension "Season" and also calls it "year": the period
    its calendar word would be ("last year"), added to the question's periods."""
    r = q.reading
    spans: list[tuple[int, int]] = []
    # a word with no calendar word is left alone ("the last hired": a latest one, no period the model defines)
    for word, unit in sorted((w, u) for w, u in _period_words(k).items() if u):
        for found in _relative_periods(r.text, word):
            if any(overlaps(found.span(), t) for t in [*r.time_spans, *spans]):
                continue
            relative = _RELATIVE_ZH.get(found.group(1), found.group(1))
            ranges = extract_time(f"{relative} {unit}", r.today).ranges
            if len(ranges) != 1:
                continue
            spans.append(found.span())
            if all(t.phrase != found.group(0) for t in q.understanding.time_ranges):  # read once
                q.understanding.time_ranges.append(replace(ranges[0], phrase=found.group(0)))
    return spans


_COUNTED_BEFORE = re.compile(r"(?:多少|几|[0-9一二三四五六七八九十两百千万]+|前|每|这|那|各)$")


def _classifier(r: Reading, m: Mention) -> bool:
    """ "多少名球员", "前五名", "每名": a one-character name right after a number or a count word is the
    number's classifier (名 counts people), not the name it also is (名 = a given name)."""
    return len(m.text) == 1 and m.text in ZH_CLASSIFIERS and bool(_COUNTED_BEFORE.search(r.text[: m.start]))


def collect(q: Question, k: Knowledge) -> None:
    r = q.reading
    r.time_spans = _time_spans(r)
    r.time_spans += _model_periods(q, k)
    r.use(*r.time_spans)
    grains = _dimension_grains(r, k)
    free = [*r.time_spans, *(g.span for g in grains)]
    r.marks = _language_marks(r.text, free) + grains
    names = [m for m in k.lexicon.find(r.text) if not any(overlaps(m.span, t) for t in free) and not _classifier(r, m)]
    rows = _row_mentions(q, names)
    for row in list(rows):  # a name the model also knows there ("ROMANIA": a nation row and a supplier's
        same = next((m for m in names if m.span == row.span), None)  # nation value) keeps every reading
        if same is not None:
            same.targets += [t for t in row.targets if t not in same.targets]
            same.weights.update(row.weights)
            rows.remove(row)
    names = [m for m in names if not any(overlaps(m.span, row.span) for row in rows)]
    names = _shared_heads(r.text, names, k)
    r.mentions = sorted(names + rows, key=lambda m: m.start)
    for m in r.mentions:
        _widen_to_value(r.text, m)
    # a language word inside a name is part of the name ("Average order value", "Order count"); a sign
    # inside a segment's name stays, for the rows of a cube the segment is not on ("negative balance")
    r.marks = [
        k_
        for k_ in r.marks
        if not any(
            m.start <= k_.start
            and k_.end <= m.end
            and (k_.start, k_.end) != (m.start, m.end)
            and not (k_.kind == "sign" and m.of("segment"))
            for m in r.mentions
        )
    ]
    if grains:
        r.notes.append("; ".join(f"{g.text!r}: {g.data[0]} of {g.data[1]}" for g in grains))
