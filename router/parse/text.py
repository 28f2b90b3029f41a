"""Words of a question with their places: English words normalised to their stem (lower case, possessive
dropped, common irregular verbs to their base, then the Snowball English stemmer: "cancellations",
"cancelled" -> "cancel"; "flew", "flown" -> "fli"), runs of Chinese characters kept whole, every word
with its character span in the text. Names of the model are normalised the same way, so they meet."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import snowballstemmer

# words of any Latin script ("Holý", "Åsa"), numbers, runs of Chinese; "'s" stays on its word ("Holý's")
_WORD = re.compile(r"[^\W_\u3400-\u9fff]+(?:['’](?:s|ve|re|ll|d|t|m)\b)?|[\u3400-\u9fff]+")
_CJK = re.compile(r"[\u3400-\u9fff]")
# words in parentheses restate or define ("late (received after the commit date)")
ASIDE = re.compile(r"\([^()]*\)|（[^（）]*）")
# function words dropped on both sides before a name is matched ("number of customers" = "number customers")
GLUE = frozenset({"the", "a", "an", "of"})  # their own stems


@dataclass(frozen=True)
class Word:
    start: int
    end: int
    raw: str
    norm: str

    @property
    def cjk(self) -> bool:
        return bool(_CJK.match(self.raw))


def has_cjk(text: str) -> bool:
    return bool(_CJK.search(text))


_STEMMER = snowballstemmer.stemmer("english")
_IRREGULAR = {
    "flew": "fly",
    "flown": "fly",
    "took": "take",
    "taken": "take",
    "sold": "sell",
    "bought": "buy",
    "paid": "pay",
    "spent": "spend",
    "made": "make",
    "ran": "run",
    "went": "go",
    "gone": "go",
    "came": "come",
    "wrote": "write",
    "written": "write",
    "brought": "bring",
    "built": "build",
    "grew": "grow",
    "grown": "grow",
    "began": "begin",
    "begun": "begin",
    "held": "hold",
    "kept": "keep",
    "sent": "send",
    "won": "win",
    "lost": "lose",
    "left": "leave",
    "chose": "choose",
    "chosen": "choose",
    "gave": "give",
    "given": "give",
    "got": "get",
    "gotten": "get",
    "saw": "see",
    "seen": "see",
    "children": "child",
    "people": "person",
    "men": "man",
    "women": "woman",
    "data": "data",
}


# the short forms analysts type for words names are made of ("avg order value": "Average order value")
_ABBREVIATED = {
    "avg": "average",
    "amt": "amount",
    "qty": "quantity",
    "qtys": "quantities",
    "cnt": "count",
    "pct": "percent",
    "acct": "account",
    "bal": "balance",
    "dept": "department",
    "mgr": "manager",
    "addr": "address",
}


# past forms read as verbs only, never as the names they share a stem with ("threw" is no "Throws" column)
_PAST_ONLY = frozenset(
    {"threw", "thrown", "stole", "stolen", "struck", "drove", "driven", "caught", "hit", "shot", "rode"}
)


def past_form(word: str) -> bool:
    """A verb in the past: an irregular form, a past-only form ("threw") or a regular "-ed" form."""
    lowered = word.lower()
    return irregular_form(lowered) or lowered in _PAST_ONLY or (lowered.endswith("ed") and len(lowered) > 4)


def irregular_form(word: str) -> bool:
    """An irregular verb form ("won", "sold", "paid"): its normal form is another word."""
    return word.lower() in _IRREGULAR


@lru_cache(maxsize=65536)
def norm_word(raw: str) -> str:
    """ "Customers'", "customer's" and "customers" all read "custom"; "flew" reads "fli" like "flights";
    "avg" reads "averag" like "average"."""
    word = re.sub(r"['’](?:s|ve|re|ll|d|t|m)$", "", raw.lower())
    if not word.isascii() or not word.isalpha():
        return word
    word = _ABBREVIATED.get(word, word)
    return str(_STEMMER.stemWord(_IRREGULAR.get(word, word)))


def stems(words_: str) -> frozenset[str]:
    """The stems of whitespace-separated words (sets of language words compared with normalised words)."""
    return frozenset(norm_word(w) for w in words_.split())


def words(text: str) -> list[Word]:
    return [Word(m.start(), m.end(), m.group(0), norm_word(m.group(0))) for m in _WORD.finditer(text)]


@lru_cache(maxsize=65536)
def name_key(name: str) -> tuple[str, ...]:
    """The words a name is matched by ("Number of Customers" -> ("number", "custom")); snake_case and the
    camelCase of identifiers ("orderTotal", not the brand "JetBlue") split."""
    camel = name[:1].islower() and " " not in name
    spaced = (re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name) if camel else name).replace("_", " ")
    return tuple(w.norm for w in words(spaced) if not w.cjk and w.norm not in GLUE)


def overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def within(span: tuple[int, int], spans: Iterable[tuple[int, int]]) -> bool:
    """``span`` lies inside one of ``spans``."""
    return any(s <= span[0] and span[1] <= e for s, e in spans)
