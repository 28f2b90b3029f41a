"""What a reading is good for: answering, a refusal that says what is missing, or nothing (the parser did
not find what the question asks about, and the caller's own rules decide).

A reading answers only when every word is accounted for: a word nothing in the model or the language
explains, or a language word no pass could honour ("average" of something without an average measure, a
bound on nothing), makes the answer a refusal naming those words. A wrong number is worse than a refusal.
"""

from __future__ import annotations

from dataclasses import dataclass

from router.parse.reading import Reading
from router.parse.text import within


@dataclass(frozen=True)
class Verdict:
    answers: bool
    refusal: str | None = None
    asks: bool = False  # the refusal asks the reader to choose (a value two dimensions hold), nothing is missing


def judge(r: Reading) -> Verdict:
    if r.refusal and r.asked and r.unknown_spans and all(within(s, [r.asked]) for s in r.unknown_spans):
        return Verdict(False, r.refusal, asks=True)  # 'Cubs' is a team's name and a franchise's: which one
    if r.unknown and r.intent is not None:
        return Verdict(False, _unknown(r))
    if r.refusal:
        return Verdict(False, r.refusal)
    if r.intent is None:
        return Verdict(False, _unknown(r) if r.unknown else None)
    unresolved = [c for c in r.referred if not any(f.member.split(".", 1)[0] == c for f in r.filters)]
    if unresolved:  # "who supplies that part" with nothing saying which part
        return Verdict(False, f"which {unresolved[0]}? Name it (its key or name)")
    if r.unhonoured:
        words = ", ".join(repr(w) for w in r.unhonoured[:3])
        return Verdict(
            False, f"I could not apply {words} to anything the model has: name the measure or column it is about"
        )
    return Verdict(True)


def _unknown(r: Reading) -> str:
    words = ", ".join(repr(w) for w in r.unknown[:4])
    return f"nothing in the model is called {words}: rephrase with the names of its measures, dimensions or values"
