"""The words of one warehouse: every name a question may use for a cube, measure, dimension, segment or
value, from the Cube model, the glossary and the warehouse's own values.

Sources (all optional but the model):
- the model: each public cube, measure, dimension and segment by its title, its title without a
  parenthesised unit ("Longest track (ms)" -> "Longest track"), its name in words (``avg_total`` -> "avg
  total"; not for names that are only a generic word such as ``name`` or ``count``) and ``meta.synonyms``;
- glossary terms (``semlayer.business_term`` rows or the glossary file): the canonical term and synonyms,
  mapped to ``table:``/``metric:``/``dimension:``/``segment:`` assets, a value when ``filter_value`` is set;
- dimension values read from the warehouse (``router.aggregate.values.ValueIndex``).

English names are matched word by word on normalised words (singular, lower case, "the/a/of" dropped), so
"Number of Customers" is found in "how many customers"; Chinese names and names with symbols are found as
substrings. Overlapping finds are resolved longest first; one span keeps every target of its words.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from fourengine.terms import normalise
from router.aggregate.members import aliases
from router.parse.facts import column, label, numbers_aggregated, primary_key, row_count
from router.parse.language import EVENT_VERBS, REFERRING_WORDS, STOPWORDS_EN
from router.parse.reading import Mention, Target, TargetKind, member_kinds
from router.parse.text import GLUE, Word, has_cjk, irregular_form, name_key, norm_word, overlaps, stems, words

GENERIC_NAMES = stems(
    " ".join(
        {
            "name",
            "key",
            "id",
            "type",
            "count",
            "date",
            "time",
            "status",
            "code",
            "number",
            "total",
            "value",
            "amount",
            "flag",
            "comment",
            "description",
            "note",
            "size",
            "sum",
        }
    )
)
# calendar words: "the worst day of 2013" is a period's grain, not an airport coded DAY
TIME_WORDS = frozenset(
    [
        "day",
        "days",
        "week",
        "weeks",
        "month",
        "months",
        "year",
        "years",
        "quarter",
        "quarters",
        "hour",
        "hours",
        "minute",
        "minutes",
        "today",
        "tonight",
        "yesterday",
        "tomorrow",
        "date",
        "dates",
        "time",
        "times",
        "morning",
        "evening",
        "night",
        "weekend",
        "weekday",
    ]
)
LANGUAGE_WORDS = (
    STOPWORDS_EN | TIME_WORDS | {"on", "in", "or", "me", "us", "it", "am", "pm", "no", "go", "do", "hi", "id"}
)
# words that cannot make a name on their own: superlatives, aggregation words, units
LANGUAGE_ONLY = GENERIC_NAMES | stems(
    "the a an of in on at to for from by with and or per each every all any this that these those is are was "
    "were be it its their our we you i me my avg average mean max maximum min minimum total sum count highest "
    "lowest largest smallest biggest longest shortest top bottom best worst most least latest earliest newest "
    "oldest m ms sec minute hour day mb kb pct"
)
TITLE, NAME_WORDS = 2, 1  # how a target was found: by a title/synonym/term, or only by the member's name
_KIND_OF_ASSET: dict[str, TargetKind] = {
    "table": "cube",
    "metric": "measure",
    "measure": "measure",
    "dimension": "dimension",
    "segment": "segment",
    "time_dimension": "dimension",
}


class Term(Protocol):
    """A glossary term (``fourengine.store.TermRow`` has this shape)."""

    canonical_term: str
    synonyms: list[str]
    mapped_asset_type: str | None
    mapped_asset_id: str | None
    filter_value: str | None


class Values(Protocol):
    """Dimension values by lower-cased surface (``router.aggregate.values.ValueIndex``)."""

    surfaces: dict[str, list[tuple[str, str]]]


@dataclass(frozen=True)
class Entry:
    target: Target
    weight: int
    surface: str = ""  # the name as written, normalised (lower case, singular): exact finds win ties


@dataclass
class Lexicon:
    by_words: dict[tuple[str, ...], list[Entry]] = field(default_factory=dict)
    by_text: dict[str, list[Entry]] = field(default_factory=dict)  # Chinese and symbol names, lower case
    longest: int = 1
    stems: set[str] = field(default_factory=set)  # the first five letters of every word of a model name
    squashed: dict[str, set[Target]] = field(default_factory=dict)  # values by their letters and digits only
    word_stems: set[str] = field(default_factory=set)  # the stems of the words of model names (not values)
    known: set[str] = field(default_factory=set)  # every normalised word of every name, values too
    forms: dict[str, str] = field(default_factory=dict)  # words of model names as written (lower) -> normalised
    _short: dict[str, str] = field(default_factory=dict, repr=False)  # abbreviations met so far -> normalised
    heads: dict[str, set[Target]] = field(default_factory=dict)  # values by their first word ("jumbo": JUMBO BOX)

    def add(self, surface: str, target: Target, weight: int = TITLE) -> None:
        surface = str(surface).strip()
        if not surface:
            return
        entry = Entry(target, weight, normalise(surface))
        if target.kind == "value" and (head := _HEAD.match(surface)) and head.end() < len(surface):
            self.heads.setdefault(head.group(0).lower(), set()).add(target)
        if has_cjk(surface) or not re.fullmatch(r"[^\W\u3400-\u9fff]+(?:[ _\-'’.]+[^\W\u3400-\u9fff]*)*", surface):
            bucket = self.by_text.setdefault(surface.lower(), [])
        else:
            key = name_key(surface)
            if not key:
                return
            bucket = self.by_words.setdefault(key, [])
            self.longest = max(self.longest, len(key))
            self.known.update(key)
            if target.kind == "value":
                self.squashed.setdefault(squash(surface), set()).add(target)
            else:
                self.stems.update(w[:5] for w in key if len(w) >= 5)
                self.word_stems.update(key)
                self.forms.update((w.raw.lower(), w.norm) for w in words(surface) if w.raw.isalpha())
            self._short.clear()
        if entry not in bucket:
            bucket.append(entry)

    def find(self, text: str) -> list[Mention]:
        """The names in ``text``, longest first, no overlaps; one span keeps every target it names. A value
        spelled like a language word ("ON", "IN", "ALL") is a value only where it is written as the value."""
        found = [
            (start, end, kept)
            for start, end, entries in self._word_finds(text) + self._text_finds(text)
            if (kept := [e for e in entries if _as_written(e, text[start:end]) and _verb_as_name(e, text[start:end])])
        ]
        # longest first; of equal length, a name found as written ("returned orders") before one found
        # only by its stems ("number of returned" for "number of returns"), then one that does not begin with
        # an aggregation word ("number of *tracks sold*": the aggregation word is read as such anyway)
        found.sort(
            key=lambda f: (
                -(len(name_key(text[f[0] : f[1]])) or f[1] - f[0]),
                not _exact(f[2], text[f[0] : f[1]]),
                _aggregation_head(text[f[0] : f[1]]),
                -(f[1] - f[0]),
                f[0],
            )
        )
        mentions: list[Mention] = []
        for start, end, entries in found:
            same = next((m for m in mentions if (m.start, m.end) == (start, end)), None)
            if same is not None:
                _merge(same, entries)
                continue
            if any(overlaps((start, end), m.span) for m in mentions):
                continue
            mention = Mention(start, end, text[start:end], [])
            _merge(mention, entries)
            mentions.append(mention)
        return sorted(mentions, key=lambda m: m.start)

    def spelled_out(self, word: Word) -> str:
        """The normalised model word ``word`` abbreviates ("qty" -> quantity, "avail" -> available, "dep" ->
        departure) when it is no name's word itself, no language word, and abbreviates exactly one model
        word; else its own normalised form."""
        raw = word.raw.lower()
        if word.norm in self.known or raw in LANGUAGE_WORDS or not raw.isalpha() or len(raw) < 3:
            return word.norm
        if raw not in self._short:
            found = {norm for form, norm in self.forms.items() if _abbreviates(raw, form)}
            self._short[raw] = found.pop() if len(found) == 1 else word.norm
        return self._short[raw]

    def _word_finds(self, text: str) -> list[tuple[int, int, list[Entry]]]:
        seq: list[Word] = [w for w in words(text) if not w.cjk and w.norm not in GLUE and w.norm not in _AUXILIARY]
        norms = [self.spelled_out(w) for w in seq]
        out = []
        for i in range(len(seq)):
            for n in range(min(self.longest, len(seq) - i), 0, -1):
                entries = self.by_words.get(tuple(norms[i : i + n]))
                if entries and _adjacent(text, seq[i : i + n]):
                    out.append((seq[i].start, seq[i + n - 1].end, entries))
        return out

    def _text_finds(self, text: str) -> list[tuple[int, int, list[Entry]]]:
        lowered = text.lower()
        out = []
        for surface, entries in self.by_text.items():
            if surface not in lowered:  # most are not: no pattern to build
                continue
            for m in re.finditer(re.escape(surface), lowered):
                if _bounded(lowered, m.start(), m.end()):
                    out.append((m.start(), m.end(), entries))
        return out


def _abbreviates(short: str, long: str) -> bool:
    """ "avail" of "available" (its first letters), "qty" of "quantity" (its first and last letter and
    letters of it in order between); the long word at least two letters longer."""
    if len(long) < len(short) + 2 or short[0] != long[0]:
        return False
    if long.startswith(short):
        return True
    rest = iter(long)
    return short[-1] == long[-1] and all(ch in rest for ch in short)


def _exact(entries: list[Entry], surface: str) -> bool:
    said = normalise(surface)
    return any(e.surface == said for e in entries)


def lower_case_reference(said: str, name: str) -> bool:
    """ "the big ones" for "Big Ones": a name with a word that refers back, written in lower case, is that word
    said of something else, not the name."""
    return said.islower() and not name.islower() and any(w.lower() in REFERRING_WORDS for w in said.split())


def _as_written(entry: Entry, surface: str) -> bool:
    """A value spelled like a language word is found where written as the value, or, for a glossary
    synonym, in capitals ("US" for the USA, not "us"); so is a value with a word that refers back ("the big
    ones" is no album "Big Ones")."""
    target = entry.target
    if target.kind != "value" or target.value is None:
        return True
    if surface.lower() not in LANGUAGE_WORDS:
        return not lower_case_reference(surface, str(target.value))
    return surface == target.value or (target.source == "glossary" and len(surface) > 1 and surface.isupper())


def _verb_as_name(entry: Entry, surface: str) -> bool:
    """A name of several words is found where each irregular verb form of the question is written so in the
    name ("units sold"): "team won" is no "team wins" (a subject and its verb: "which team won the most")."""
    said = re.findall(r"[a-z]+", surface.lower())
    written = set(entry.surface.split())
    return len(said) < 2 or all(w in written or not irregular_form(w) for w in said)


def _merge(mention: Mention, entries: list[Entry]) -> None:
    """Targets of one span, best-weighted first; one target per (kind, path, value)."""
    for entry in sorted(entries, key=lambda e: -e.weight):
        same = next(
            (
                t
                for t in mention.targets
                if (t.kind, t.path, t.value) == (entry.target.kind, entry.target.path, entry.target.value)
            ),
            None,
        )
        if same is None:
            mention.targets.append(entry.target)
            mention.weights[entry.target] = entry.weight


# auxiliary verbs a question puts inside a name ("tracks *were* sold" names "Tracks sold")
_AUXILIARY = stems("is are was were be been being ever")
_AGGREGATION_HEADS = stems("number count total sum average avg mean")


def _aggregation_head(surface: str) -> bool:
    key = name_key(surface)
    return bool(key) and key[0] in _AGGREGATION_HEADS


def _adjacent(text: str, run: list[Word]) -> bool:
    """The words of a name stand together: only spaces, hyphens, glue words, auxiliary verbs or a possessive
    between them; a dash between spaces ("payments - method") breaks them apart."""
    for a, b in itertools.pairwise(run):
        gap = text[a.end : b.start]
        if re.search(r"\s-+\s", gap) or not re.fullmatch(
            r"(?:[\s\-/_'’]|\b(?:the|a|an|of|is|are|was|were|be|been|being|ever)\b)*", gap, re.IGNORECASE
        ):
            return False
    return True


def _bounded(text: str, start: int, end: int) -> bool:
    """Latin ends of a substring sit on word boundaries ("pulse" is not inside "impulse")."""
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    return not (text[start].isascii() and text[start].isalnum() and before.isascii() and before.isalnum()) and not (
        text[end - 1].isascii() and text[end - 1].isalnum() and after.isascii() and after.isalnum()
    )


def _names(title: str, name: str, meta: dict[str, Any]) -> list[tuple[str, int]]:
    bare = re.sub(r"\s*\([^)]*\)", "", title or "").strip()
    synonyms = [str(s) for s in (meta or {}).get("synonyms") or [] if isinstance(s, str | int)]
    named = [
        (n, TITLE) for n in (title, bare, *synonyms) if n and (has_cjk(n) or not set(name_key(n)) <= LANGUAGE_ONLY)
    ]
    leaf = name.replace("_", " ").strip()
    key = set(name_key(leaf))
    if leaf and not key <= GENERIC_NAMES and not key <= LANGUAGE_ONLY:  # "shortest_ms" names no concept
        named.append((leaf, NAME_WORDS))
    return named


def build_lexicon(model: Any, terms: Iterable[Term] = (), values: Values | None = None) -> Lexicon:
    """The lexicon of ``model`` plus glossary ``terms`` and warehouse ``values`` (see the module docstring)."""
    lex = Lexicon()
    for cube in model.cubes.values():
        for surface, weight in _names(cube.title, cube.name, cube.meta):
            lex.add(surface, Target("cube", cube.name), weight)
        _add_generic_tails(lex, cube)
        _add_line_words(lex, cube)
        for kind, members in member_kinds(cube):
            for member in members.values():
                if not getattr(member, "public", True):
                    continue
                for surface, weight in _names(member.title, member.name, member.meta):
                    lex.add(surface, Target(kind, member.path), weight)
    for term in terms:
        _add_term(lex, model, term, values)
    for surface, found in values.surfaces.items() if values is not None else []:
        for member, value in found:
            lex.add(surface, Target("value", member, value, "values"), TITLE)
    _add_translations(lex)
    _add_count_stems(lex, model)
    _add_counted_nouns(lex, model)
    _add_cube_names_zh(lex, model)
    _add_count_names_zh(lex, model)
    _add_line_words_zh(lex, model)
    _add_key_and_name_zh(lex, model)
    _add_qualified_heads(lex, model)
    _add_event_heads(lex, model)
    _add_bare_averages(lex, model)
    return lex


_AVERAGE_HEADS = frozenset(stems("average avg mean"))


def _add_bare_averages(lex: Lexicon, model: Any) -> None:
    """ "Average transit days" is also "transit days" ("最长运输天数", "the longest transit days"): an average
    measure's name without its average word names the column averaged, weakly; what is asked of it (its
    average, its maximum) is the aggregation word's to say. Only a bare name of two words or more (three
    Chinese characters) that names nothing else ("average invoice" is no name of invoices)."""

    def average(entries: list[Entry]) -> list[Target]:
        """The average measures named, with the dimensions over the column each averages ("零售价")."""
        found = [model.find_member(e.target.path) for e in entries if e.target.kind == "measure"]
        averages = [m for m in found if getattr(m, "type", "") == "avg" and column(m)]
        return [
            *(Target("dimension", d.path) for m in averages for d in numbers_aggregated(model, m)),
            *(Target("measure", m.path) for m in averages),
        ]

    for key, entries in list(lex.by_words.items()):
        bare = key[1:]
        if key[0] in _AVERAGE_HEADS and len(bare) >= 2 and bare not in lex.by_words and (found := average(entries)):
            lex.by_words[bare] = [Entry(t, NAME_WORDS, " ".join(bare)) for t in found]
    for text, entries in list(lex.by_text.items()):
        rest = text[2:] if text.startswith("平均") else ""
        if len(rest) >= 3 and has_cjk(rest) and rest not in lex.by_text and (found := average(entries)):
            lex.by_text[rest] = [Entry(t, NAME_WORDS, rest) for t in found]


_EVENT_STEMS = frozenset(norm_word(v) for v in EVENT_VERBS)


def _add_event_heads(lex: Lexicon, model: Any) -> None:
    """ "Units sold" is also "units" ("which artists sold the most units"): a measure named by a noun and a
    verb of an event is named by the noun weakly (the verb, said anywhere, restates it)."""
    for key, entries in list(lex.by_words.items()):
        head = key[:-1] if len(key) >= 2 and key[-1] in _EVENT_STEMS else ()
        if head and not set(head) <= LANGUAGE_ONLY:
            for entry in entries:
                if entry.target.kind == "measure":
                    lex.add(" ".join(head), entry.target, NAME_WORDS)


def _add_qualified_heads(lex: Lexicon, model: Any) -> None:
    """ "supplier country" (a synonym of the supplier cube's nation) is also "country" said of suppliers
    ("number of suppliers by country"): a dimension named by its cube's name and more words is named by
    those words too (weakly: the join to what is measured decides between it and a column they name)."""
    for key, entries in list(lex.by_words.items()):
        for entry in entries:
            member = model.find_member(entry.target.path) if entry.target.kind == "dimension" else None
            own = _cube_words(model, member.cube) if member is not None else set()
            head = key[1:] if len(key) >= 2 and key[0] in own else ()
            if head and not set(head) <= LANGUAGE_ONLY:
                lex.add(" ".join(head), entry.target, NAME_WORDS)


def _cube_words(model: Any, cube: str) -> set[str]:
    """The one-word names of ``cube`` (its name and title, singular)."""
    found = model.cubes[cube]
    return {k[0] for k in (name_key(found.name.replace("_", " ")), name_key(found.title or "")) if len(k) == 1}


_LINE_ZH = ("行", "明细", "明细行", "行项目")


def _add_line_words_zh(lex: Lexicon, model: Any) -> None:
    """ "发票行", "发票明细": a lines cube ("Invoice lines", joined many-to-one to its document) is also a Chinese
    name of the document followed by a word for its lines (weakly: a name the glossary gives wins)."""
    for cube in model.cubes.values():
        key = name_key(cube.title or cube.name)
        if not key or key[-1] not in _LINE_TAILS:
            continue
        for join in cube.joins:
            if join.relationship not in ("many_to_one", "belongs_to", "belongsTo"):
                continue
            names = [
                text
                for text, entries in list(lex.by_text.items())
                if has_cjk(text) and any((e.target.kind, e.target.path) == ("cube", join.target) for e in entries)
            ]
            for name, tail in ((n, t) for n in names for t in _LINE_ZH):
                if f"{name}{tail}" not in lex.by_text:
                    lex.add(f"{name}{tail}", Target("cube", cube.name), NAME_WORDS)


_KEY_ZH = ("编号", "号码", "单号", "ID", "id")
_LABEL_ZH = ("名称", "名字", "名")


def _add_key_and_name_zh(lex: Lexicon, model: Any) -> None:
    """ "曲目编号", "艺人的名称": a Chinese name of a cube followed by a word for a number or a name is its key
    or its label (weakly: a name the model or glossary gives wins)."""
    for text, entries in list(lex.by_text.items()):
        cubes = {e.target.path for e in entries if e.target.kind == "cube"} if has_cjk(text) else set()
        for cube in cubes:
            said = ((_KEY_ZH, primary_key(model, cube)), (_LABEL_ZH, label(model, cube, "zh")))
            for tails, member in ((t, m) for t, m in said if m is not None):
                for surface in (f"{text}{of}{tail}" for tail in tails for of in ("", "的")):  # "发票的编号"
                    if surface.lower() not in lex.by_text:
                        lex.add(surface, Target("dimension", member), NAME_WORDS)


_COUNT_SUFFIX = re.compile(r"(?:数量|总数|个数|数|量)$")


def _add_count_stems(lex: Lexicon, model: Any) -> None:
    """ "发票数" names the invoice count, so "发票" names invoices: the stem of a Chinese name of a cube's row
    count (before 数量/总数/个数/数/量) names the cube, unless it already names something."""
    for surface, entries in list(lex.by_text.items()):
        stem = _COUNT_SUFFIX.sub("", surface)
        if stem == surface or len(stem) < 2 or not has_cjk(stem) or stem in lex.by_text:
            continue
        for entry in entries:
            member = model.find_member(entry.target.path) if entry.target.kind == "measure" else None
            if member is not None and row_count(model, member.cube) == member.path:
                lex.add(stem, Target("cube", member.cube), NAME_WORDS)


_NUMBER_OF = re.compile(r"^\s*(?:number|count|no\.?|#)\s+of\s+(.+?)\s*$", re.IGNORECASE)


def _add_counted_nouns(lex: Lexicon, model: Any) -> None:
    """ "Number of part-supplier offers" counts a cube's rows, so "part-supplier offers", "supplier offers" and
    "offers" name them (weakly, each only when it names nothing else yet): the count's title says what one
    row is called."""
    for cube in model.cubes:
        member = model.find_member(row_count(model, cube) or "")
        found = _NUMBER_OF.match(getattr(member, "title", None) or "")
        if found is None or has_cjk(found.group(1)):
            continue
        parts = re.split(r"[\s-]+", found.group(1))
        for tail in (" ".join(parts[i:]) for i in range(len(parts))):
            if (key := name_key(tail)) and key not in lex.by_words:
                lex.add(tail, Target("cube", cube), NAME_WORDS)


def _add_count_names_zh(lex: Lexicon, model: Any) -> None:
    """ "下单量", "发票数": a Chinese name of a cube followed by 量 or 数 names the cube's row count, unless it
    already names something."""
    for surface, entries in list(lex.by_text.items()):
        cubes = {e.target.path for e in entries if e.target.kind == "cube"} if has_cjk(surface) else set()
        for counted in (c for cube in cubes if (c := row_count(model, cube))):
            for name in (f"{surface}量", f"{surface}数"):
                if name not in lex.by_text:
                    lex.add(name, Target("measure", counted), NAME_WORDS)


_COUNT_SUFFIX_ZH = re.compile(r"^([\u4e00-\u9fff]{2,6}?)(?:总数|个数|数量|数|量)$")


def _add_cube_names_zh(lex: Lexicon, model: Any) -> None:
    """ "航班数", "航班量" name a cube's row count: "航班" names the cube (weakly, unless it already names
    something)."""
    heads: dict[str, set[str]] = {}
    for surface, entries in list(lex.by_text.items()):
        found = _COUNT_SUFFIX_ZH.match(surface)
        counts = {
            e.target.cube
            for e in entries
            if e.target.kind == "measure" and row_count(model, e.target.cube) == e.target.path
        }
        if found and counts:
            heads.setdefault(found.group(1), set()).update(counts)
    for head, cubes in heads.items():
        if len(cubes) == 1 and head not in lex.by_text:
            lex.add(head, Target("cube", cubes.pop()), NAME_WORDS)


def squash(text: str) -> str:
    """ "Turbo-prop" -> "turboprop": letters and digits only, lower case."""
    return re.sub(r"[\W_]+", "", text.lower())


_HEAD = re.compile(r"[^\W_]+(?=[\s/-])")  # "JUMBO" of "JUMBO BOX", "A330" of "A330-243"


def value_head(lex: Lexicon, word: str) -> list[Target]:
    """ "JUMBO containers", "the A330s": the first word of two or more values of one dimension (plural or not)
    names them all, a model number ("787s": 787-8) also one; the targets of its values (one per value)."""
    lowered = word.lower()
    for form in (lowered, lowered[:-1] if lowered.endswith("s") else None):
        found = lex.heads.get(form) if form else None
        if found and len({t.path for t in found}) == 1 and (len(found) >= 2 or any(c.isdigit() for c in lowered)):
            return sorted(found, key=lambda t: str(t.value))
    return []


def plural_value(lex: Lexicon, word: str) -> list[Target]:
    """ "turboprops" -> Turbo-prop: a plural whose singular is one value written without its spaces or
    hyphens."""
    lowered = word.lower()
    for cut in ("es", "s"):
        if lowered.endswith(cut) and (found := lex.squashed.get(squash(lowered[: -len(cut)]))):
            return sorted(found, key=lambda t: t.path) if len({t.value for t in found}) == 1 else []
    return []


def value_stems(lex: Lexicon, word: str) -> list[Target]:
    """Values a word derives from ("Brazilian" -> BRAZIL, "German" -> GERMANY, "Canadian" -> CANADA): its
    first letters (all but three, at least four) begin the value, or the value (four letters or more)
    begins it; or the first word of a longer value ("Frontier" -> "Frontier Airlines Inc."); only when
    exactly one value does. Else the last word of longer values ("Cubs" -> "Chicago Cubs"): as written, all the
    values that end so ("Dodgers": Brooklyn and Los Angeles Dodgers, in a team's name and a franchise's; the
    filters pass keeps one column or asks); by its normal form only, all the values of the columns holding the
    same ones (``_all_of_one_column``)."""
    lowered = word.lower()
    head = lowered[: max(4, len(lowered) - 3)]
    first = norm_word(word)
    derived: set[Target] = set()
    first_of: set[Target] = set()
    last_of: set[Target] = set()
    for key, entries in lex.by_words.items():
        for entry in entries:
            if entry.target.kind != "value" or not str(entry.target.value)[:1].isupper():
                continue
            if len(key) == 1 and (key[0].startswith(head) or (len(key[0]) >= 4 and lowered.startswith(key[0]))):
                derived.add(entry.target)
            elif len(key) > 1 and key[0] == first:  # "Frontier" -> "Frontier Airlines Inc."
                first_of.add(entry.target)
            elif len(key) > 1 and key[-1] == first and len(lowered) >= 4:  # "Cubs" -> "Chicago Cubs"
                last_of.add(entry.target)
    base = re.sub(r"['’]s?$", "", lowered)
    first_written = {t for t in first_of if str(t.value).split()[0].lower() == base}
    last_written = {t for t in last_of if str(t.value).split()[-1].lower() == base} - first_written
    # a place's own name first ("Brazilian" -> Brazil, though an album title begins "Brazilian ..."); a last
    # word as written before a first word only by its stem ("Dodgers", not "Dodger Stadium")
    for found in (derived, first_written, last_written, first_of):
        if found and found is last_written and len({t.value for t in found}) > 1:
            return sorted(found, key=lambda t: (t.path, str(t.value)))  # the filters pass nests them, or asks
        if found:
            return list(found) if len({t.value for t in found}) == 1 else []  # one value, maybe in several columns
    return _all_of_one_column(last_of)


def value_tail(lex: Lexicon, phrase: str) -> list[Target]:
    """ "Red Sox" -> "Boston Red Sox": the last two words or more of longer capitalised values, as written; all
    the values that end so (the filters pass keeps one column or asks)."""
    key = name_key(phrase)
    if len(key) < 2:
        return []
    found = {
        entry.target
        for k, entries in lex.by_words.items()
        if len(k) > len(key) and k[-len(key) :] == key
        for entry in entries
        if entry.target.kind == "value" and str(entry.target.value).endswith(phrase)
    }
    return sorted(found, key=lambda t: (t.path, str(t.value)))


def _all_of_one_column(targets: set[Target]) -> list[Target]:
    """Values sharing a last word, when each column holding them holds the same ones (team names and franchise
    names alike); else none."""
    by_column: dict[str, set[str]] = {}
    for t in targets:
        by_column.setdefault(t.path, set()).add(str(t.value))
    same = len(set(map(frozenset, by_column.values()))) == 1
    return sorted(targets, key=lambda t: (t.path, str(t.value))) if same else []


def _add_translations(lex: Lexicon) -> None:
    """Chinese words of common analytics concepts ("地区" = region, "渠道" = channel; a bilingual word list,
    ``router/aggregate/dimension_aliases.yaml``) name what the same English words name in this model."""
    for zh, en in aliases().items():
        if not has_cjk(zh) or zh in lex.by_text:
            continue
        for entry in lex.by_words.get(name_key(en), []) or _headed(lex, name_key(en)):
            if entry.target.kind != "value":
                lex.add(zh, entry.target, NAME_WORDS)


def _headed(lex: Lexicon, key: tuple[str, ...]) -> list[Entry]:
    """The dimensions named by more words ending in ``key`` ("List price" for "price"), when no name is just
    ``key``: the question's other words and its cubes choose between them."""
    if not key or set(key) <= GENERIC_NAMES:
        return []  # "金额": the generic amount word says the listed cube's amount (passes.order)
    return [
        e
        for k, entries in lex.by_words.items()
        if len(k) > len(key) and k[-len(key) :] == key
        for e in entries
        if e.target.kind == "dimension"
    ]


# generic words a cube's own dimension goes by alone ("status"), unlike "number" ("phone numbers", "number of")
_TAIL_NAMES = stems("name type date time status code flag comment description note size")


# the rows of a document (an order's, an invoice's): however the model titles them, people say any of these
_LINE_TAILS = stems("item items line lines lineitem lineitems")
_LINE_WORDS = ("lines", "items", "line items", "明细行", "明细", "行项目")


def _add_line_words(lex: Lexicon, cube: Any) -> None:
    """ "Order items", "Invoice lines", "Line items": a cube titled as the lines of something is also "lines",
    "items", "line items" and "<something> lines" (weakly: a name the model gives wins)."""
    key = name_key(cube.title or cube.name)
    if not key or key[-1] not in _LINE_TAILS:
        return
    head = " ".join((cube.title or cube.name).split()[:-1])
    for surface in (*_LINE_WORDS, *((f"{head} lines", f"{head} items") if head else ())):
        lex.add(surface, Target("cube", cube.name), NAME_WORDS)


def _add_generic_tails(lex: Lexicon, cube: Any) -> None:
    """ "Order status" of the orders cube is also "status" ("orders per status"), "Part type" "type": a
    dimension titled by its cube's name and one generic word is named by that word too (weakly: the
    question's other names decide between cubes)."""
    own = set(name_key(cube.name)) | set(name_key(cube.title or ""))
    for dim in cube.dimensions.values():
        key = name_key(dim.title or "")
        if dim.public and len(key) >= 2 and key[-1] in _TAIL_NAMES and set(key[:-1]) <= own:
            lex.add(dim.title.split()[-1], Target("dimension", dim.path), NAME_WORDS)


def _add_term(lex: Lexicon, model: Any, term: Term, values: Values | None = None) -> None:
    asset_type, _, body = str(term.mapped_asset_id or "").partition(":")
    kind = _KIND_OF_ASSET.get(term.mapped_asset_type or asset_type)
    if kind is None or not body:
        return
    if kind == "cube" and body not in model.cubes:
        return
    if kind != "cube" and model.find_member(body) is None:
        return
    if term.filter_value is not None:
        target = Target("value", body, str(term.filter_value), "glossary")
    else:
        target = Target(kind, body, None, "glossary")
    for surface in [term.canonical_term, *(term.synonyms or [])]:
        if has_cjk(surface) or not set(name_key(surface)) <= LANGUAGE_ONLY:
            lex.add(surface, target, TITLE + 1)
            for twin in _same_value(values, target):
                lex.add(surface, twin, TITLE)


def _same_value(values: Values | None, target: Target) -> list[Target]:
    """A glossary value's own value in other dimensions ("日本" -> nation JAPAN, also the supplier's nation
    JAPAN): the filter pass keeps the one the question's rows reach."""
    if target.kind != "value" or values is None or target.value is None:
        return []
    found = values.surfaces.get(target.value.lower(), [])
    return [Target("value", member, value, "values") for member, value in found if member != target.path]
