"""Questions about what did not happen ("which products have never been returned", "从未开票的供应商").

Neither path can answer them yet (they need an anti-join), and filtering on the named event would answer
the opposite question, so both paths refuse them with this phrase named.
"""

from __future__ import annotations

import re

NEGATION = re.compile(
    r"\bnever\b|\bwithout (?:any|a)\b|\bhave(?:n't| not) (?:been|had|placed|bought|ordered)\b|"
    r"\bno (?!less\b)[a-z]*[a-rt-z]s\b|从未|从没|从来没|没有被|没被|未被|没有下单|没有购买",  # "with no claims"
    re.IGNORECASE | re.ASCII,
)


def negation(text: str) -> str | None:
    """The words that ask about what did not happen, or None."""
    m = NEGATION.search(text)
    return m.group(0) if m else None


def refusal(phrase: str) -> str:
    return f"questions about what did not happen ('{phrase}') are not supported yet: ask for what did happen instead"
