"""Pass: what an aggregate is grouped by.

- A group-by word ("by", "per", "for each", "across", "按", "各", "每个") or a question word ("which",
  "what", "哪个") followed by names groups by the last of them, the earlier ones qualifying it ("by
  *customer* region": the region reached through customers, not the supplier's region).
- A ranked question without a group-by ("top 3 brands by units sold", "营业额最高的3个国家") groups by the
  first other name it ranks.
- Two or more values of one dimension compared ("video vs audio", "Germany and France") group by it.
- The rows a question opens with, followed by "with" and a bound ("pitchers with 35+ saves"), are the
  groups.
- A name resolves to one of its dimensions, or to the label dimension of a cube it names, preferring one
  joined to the measure's cube, qualified by the cube words before it, whose whole title the question
  holds, a string over a number, a non-key column.
"""

from __future__ import annotations

import re
from itertools import takewhile
from typing import Any

from fourengine.terms import singular
from router.parse import facts
from router.parse.context import Knowledge, Question
from router.parse.language import COMBINED, PERSON_WORD
from router.parse.nearby import free, free_span, phrase_after, restated
from router.parse.nesting import nested_child
from router.parse.reading import Mention, Reading
from router.parse.text import has_cjk, name_key, stems, within, words

_GENERIC = stems("name key id number code date type")
_GROUP_START = re.compile(r"^(?:各|每个|每|按|分(?!钟))")


_LANGUAGE_SUFFIX = re.compile(r"_(en|zh)$")


def _language_twins(member: Any, k: Knowledge) -> list[Any]:
    """``title_en`` and its ``title_zh``: a column and its twins in the other language (the question's
    language then decides, see ``_score``)."""
    base = _LANGUAGE_SUFFIX.sub("", member.name)
    if base == member.name:
        return [member]
    twins = [
        d
        for d in k.model.cubes[member.cube].dimensions.values()
        if d.public and d.name != member.name and _LANGUAGE_SUFFIX.sub("", d.name) == base
    ]
    return [member, *twins]


def _candidates(m: Mention, k: Knowledge, language: str) -> list[tuple[Any, int]]:
    out = []
    for t in m.of("dimension"):
        member = k.model.find_member(t.path)
        if member is not None and member.type != "time" and member.public:
            out += [(twin, m.weights.get(t, 1)) for twin in _language_twins(member, k)]
    for t in m.of("measure") if not m.of("dimension", "cube") else []:  # "each carrier" said only by
        member = facts.distinct_column(k.model, k.model.find_member(t.path))  # "Number of carriers"
        if member is not None:
            out.append((member, m.weights.get(t, 1)))
    for t in m.of("cube"):
        path = facts.label(k.model, t.path, language) or facts.primary_key(k.model, t.path)
        member = k.model.find_member(path) if path else None
        if member is not None:
            out.append((member, m.weights.get(t, 1)))
    return out


def _score(
    member: Any, weight: int, qualifiers: list[Mention], r: Reading, k: Knowledge, cubes: list[str]
) -> float | None:
    hops = [facts.reach(k.model, c).get(member.cube) for c in cubes]
    reached = [h for h in hops if h is not None]
    if cubes and not reached:
        return None  # not joined to what is measured
    score = float(weight) + (3.0 - 0.3 * min(reached) if reached else 0.0)
    question = {w.norm for w in words(r.text)}
    missing = facts.title_words(member) - question - _GENERIC
    title = set(name_key(member.title or "")) - _GENERIC
    score -= 0.7 * len(missing & title)
    for q in qualifiers:
        for t in q.of("cube"):
            if t.path == member.cube:
                score += 2.0
            elif member.cube in facts.reach(k.model, t.path):
                score += 1.0
    score += 0.5 if member.type == "string" else 0.0
    score -= 2.0 if member.primary_key else 0.0
    suffix = member.name.rsplit("_", 1)[-1]
    if suffix in ("en", "zh"):  # title_en / title_zh: the question's language
        score += 0.8 if suffix == r.language else -0.8
    return score


def head_of(run: list[Mention], r: Reading) -> int:
    """The head of a run of names: the last, or the owner in "X's Y" ("which agent's customers": agents)."""
    for i, m in enumerate(run[:-1]):
        if re.match(r"['’]s\b", r.text[m.end : m.end + 2]) or re.search(r"['’]s$", m.text):
            return i
    return len(run) - 1


def resolve(run: list[Mention], r: Reading, k: Knowledge, cubes: list[str]) -> Any | None:
    """The dimension the head of ``run`` names (qualified by the mentions before it)."""
    at = head_of(run, r)
    head, qualifiers = run[at], run[:at]
    scored = [
        (s, member)
        for member, weight in _candidates(head, k, r.language)
        if (s := _score(member, weight, qualifiers, r, k, cubes)) is not None
    ]
    return max(scored, key=lambda pair: pair[0])[1] if scored else None


def _add(r: Reading, member: Any, run: list[Mention], why: str) -> None:
    if member.path not in r.dimensions:
        r.dimensions.append(member.path)
        r.notes.append(f"group by {member.path} ({why} {' '.join(m.text for m in run)!r})")
    r.use(*(m.span for m in run if not _only_value(m)))  # "which U2 album": U2 is left to filter by


def _only_value(m: Mention) -> bool:
    return bool(m.of("value")) and not (m.of("dimension") or m.of("cube") or m.of("measure"))


def _cue_groups(r: Reading, k: Knowledge, cubes: list[str]) -> None:
    for mark in r.marks_of("group", "which"):
        run = list(takewhile(lambda m: free(r, m), phrase_after(r, mark.span)))  # "每种流派最长的曲目": 流派
        if run and mark.text.lower() == "what" and r.text[mark.end : run[0].start].strip():
            continue  # "what genre sold most" groups by genre; "what do German customers buy" does not
        if not run or any(
            m.of("measure")
            and not (m.of("dimension") or m.of("cube"))
            and not facts.counts_distinct_values(k.model, [t.path for t in m.of("measure")])
            for m in run[-1:]
        ):
            continue
        if run[-1].of("value") and not (run[-1].of("dimension") or run[-1].of("cube")):
            continue
        member = resolve(run, r, k, cubes)
        owner = _owner(run, r, k, cubes)  # "每个制造商的零件", "各个国家的供应商": grouped by the owner
        if member is not None and owner is not None and owner.path != member.path:
            r.use(run[-1].span)  # the rows counted: "供应商" of "各个国家的供应商供货总额"
            member, run = owner, run[:-1]
        elif member is not None and _grain_of_average(r, k, mark.text, member):
            r.use(mark.span, *(m.span for m in run))  # "average price per invoice line": the average's rows
            continue
        if member is not None and mark.text.lower() in ("per", "每") and member.type == "number":
            continue  # "charge per unit" is a rate, not groups of a quantity: left for the coverage to declare
        if member is not None:
            _add(r, member, run, mark.text)
            r.use(mark.span)
            if mark.kind == "which" and r.asks_one is None:
                r.asks_one = _singular(mark, run[head_of(run, r)], r)
            if mark.kind == "group":
                _coordinated(r, k, cubes, run[-1])


# "is the discount higher on app orders or on web orders": two values weighed against each other
_COMPARATIVE_OR = re.compile(
    r"\b(?:higher|lower|more|less|better|worse|bigger|smaller|greater|larger)\b.*\bor\b|"
    r"[高低多少好差大小].{0,10}还是",
    re.IGNORECASE,
)
_AND = re.compile(r"^\s*(?:,|，|、|&|\band\b|\bor\b|和|及|与|以及)\s*$", re.IGNORECASE)


def _coordinated(r: Reading, k: Knowledge, cubes: list[str], last: Mention) -> None:
    """ "by region and channel", "by segment, nation and region", "按地区和渠道": each name joined to a
    group-by by "and" or a comma is grouped by too."""
    for m in r.mentions:
        if m.start < last.end:
            continue
        if not _AND.match(r.text[last.end : m.start]) or not free(r, m) or m.of("value") or m.of("measure"):
            return
        member = resolve([m], r, k, cubes)
        if member is None:
            return
        _add(r, member, [m], "and")
        last = m


def _owner(run: list[Mention], r: Reading, k: Knowledge, cubes: list[str]) -> Any | None:
    """ "每个制造商的零件平均尺寸", "各个国家的供应商供货总额", "各品类货品": a group-by word before
    "<a column>(的)<rows of a cube>" groups by the column; the rows are what the measure counts or sums."""
    if r.language != "zh" or len(run) < 2 or not run[-1].of("cube") or run[-1].of("dimension"):
        return None
    gap = r.text[run[-2].end : run[-1].start].strip()
    if gap and not gap.startswith("的"):  # "各品类货品的平均标价": 品类 right before 货品 also owns it
        return None
    owner = resolve(run[:-1], r, k, cubes)
    return owner if owner is not None and owner.kind == "dimension" else None


def _grain_of_average(r: Reading, k: Knowledge, word: str, member: Any) -> bool:
    """ "per <cube>" naming the rows an average measure is over (its own cube's label or key)."""
    if word.lower() not in ("per", "each", "every", "每", "每个") or member.path not in (
        facts.label(k.model, member.cube, r.language),
        facts.primary_key(k.model, member.cube),
    ):
        return False
    return any(k.model.find_member(m).type == "avg" and m.split(".", 1)[0] == member.cube for m in r.measures)


def _singular(mark: Any, head: Mention, r: Reading) -> bool:
    """ "which region", "哪个国家", "who": one answer; "which regions", "哪些": several."""
    if has_cjk(mark.text):
        return "些" not in mark.text
    last = re.sub(r"['’]s$", "", head.text.split()[-1] if head.text.split() else head.text).lower()
    return not (last.endswith("s") and singular(last) != last)


def _grouped_names(r: Reading, k: Knowledge, cubes: list[str]) -> None:
    """A name that begins with a group-by word ("各地区", "每个渠道") or is followed by a word for how rows
    spread over it ("原因分布", "reason breakdown"): grouped by what it names."""
    for m in r.mentions:
        spread = _SPREAD.match(r.text, m.end) if m.of("dimension") else None  # "payment mix": no column named
        if free(r, m) and (_GROUP_START.match(m.text) or spread) and (m.of("dimension") or m.of("cube")):
            member = resolve([m], r, k, cubes)
            if member is not None:
                _add(r, member, [m], "grouped")
                if spread:
                    r.use(spread.span())


_SPREAD = re.compile(r"\s*(?:的?(?:分布|构成|结构)(?:情况)?|\s(?:distribution|breakdown|mix)\b)", re.IGNORECASE)


def _ranked(q: Question, k: Knowledge, cubes: list[str]) -> None:
    r = q.reading
    if r.dimensions or (q.understanding.ranking is None and not r.marks_of("most", "top")):
        return
    ranking = q.understanding.ranking
    phrase = ranking.phrase if ranking is not None else ""
    said = r.text.find(phrase) if phrase else -1
    top = [m for m in r.marks_of("most", "top") if free_span(r, m.span)]
    extremes = all(getattr(k.model.find_member(p), "type", "") in ("max", "min") for p in r.measures)
    if said >= 0 and not free_span(r, (said, said + len(phrase))) and not top and extremes:
        return  # "金额最大的是多少": the superlative chose the measure (a maximum), it ranks nothing

    def nameable(m: Mention) -> bool:
        return free(r, m) and bool(m.of("cube") or m.of("dimension")) and not m.of("value")

    for i, m in enumerate(r.mentions):
        if nameable(m) and not _indefinite(r, i):
            run = [m]  # "the 3 customer countries": the run's head (countries), qualified by the rest
            for x in r.mentions[i + 1 :]:
                if not nameable(x) or r.text[run[-1].end : x.start].strip():
                    break
                run.append(x)
            member = resolve(run, r, k, cubes)
            if member is not None:
                _add(r, member, run, "ranked")
                return


_INDEFINITE = re.compile(r"\b(?:a|an)\s+$", re.IGNORECASE)


def _indefinite(r: Reading, i: int) -> bool:
    """ "the worst delay on *a* Honolulu flight": a name after "a" (and the values qualifying it) is one row of
    what is measured, not the groups ranked."""
    start = r.mentions[i].start
    for m in reversed(r.mentions[:i]):
        if not m.of("value") or r.text[m.end : start].strip():
            break
        start = m.start
    return bool(_INDEFINITE.search(r.text[:start]))


def _compared_values(r: Reading, k: Knowledge, cubes: list[str]) -> None:
    """Two or more values of one column compared ("app or web orders") group by that column: of columns
    holding the same values, one the measures reach, on a cube the question names if it names one."""
    by_member: dict[str, set[str]] = {}
    said_by: dict[str, set[int]] = {}  # the mentions that name each member's values
    restating = restated(r)  # "online, i.e. web + app": the segment said again, nothing compared
    for m in r.mentions:
        if within(m.span, restating):
            continue
        for t in m.of("value"):
            if not cubes or any(t.cube in facts.reach(k.model, c) for c in cubes):
                by_member.setdefault(t.path, set()).add(str(t.value))
                said_by.setdefault(t.path, set()).add(id(m))
    named = {t.path for m in r.mentions for t in m.of("cube")}
    filtered = {f.member for f in r.filters}
    # columns holding the same values, or the same names written another way (a code and its English name),
    # or named by the same words ("Airbus" in a manufacturer column and in its grouped twin)
    for key in {frozenset(v) for v in by_member.values()} | {frozenset(ids) for ids in said_by.values()}:
        same = [p for p in by_member if frozenset(by_member[p]) == key or said_by[p] & key]
        labels = {facts.label(k.model, p.split(".", 1)[0], r.language) for p in same}  # the name, not the code
        named_rows = {p: sorted(by_member[p]) for p in same if p in labels}
        keep = (
            next((p for p in same if p in filtered), None)
            or nested_child(k.model, k.nests, named_rows, r.language)  # the team's name, not its franchise's
            or next((p for p in same if p in labels), None)
            or next((p for p in same if p.split(".", 1)[0] in named), same[0] if same else None)
        )
        for member in same:
            if member != keep:
                del by_member[member]
    compared = r.marks_of("compare") or bool(_COMPARATIVE_OR.search(r.text))
    combined = COMBINED.search(r.text)
    for member, values in by_member.items():
        # "for Boeing, Airbus, Embraer and Bombardier", "JetBlue, United and Delta each": one row each;
        # "(USA and Canada combined)": one row
        several = len(said_by.get(member, ())) > 1  # "Dodgers" names two teams' names: one row, not a comparison
        if len(values) > 1 and several and (compared or not combined) and member not in r.dimensions:
            r.dimensions.append(member)
            r.notes.append(f"group by {member}: its values are compared")


def choose(q: Question, k: Knowledge) -> None:
    r = q.reading
    if r.intent != "aggregate" or r.refusal:
        return
    cubes = list(dict.fromkeys(m.split(".", 1)[0] for m in r.measures))
    _cue_groups(r, k, cubes)
    _grouped_names(r, k, cubes)
    _ranked(q, k, cubes)
    _who(q, k, cubes)
    _compared_values(r, k, cubes)
    _rows_bounded(r, k, cubes)


def _who(q: Question, k: Knowledge, cubes: list[str]) -> None:
    """ "who has won the most MVP awards": a person word asking for the top of a measure over one cube's rows
    that nothing else groups is the one cube those rows belong to (a many-to-one join) that has a name (the
    award's player); of none or several, the question word stays unanswered (the reply refuses)."""
    r = q.reading
    asked = [m for m in r.marks_of("which") if PERSON_WORD.match(m.text) and free(r, m)]
    if r.dimensions or len(cubes) != 1 or q.understanding.ranking is None or not asked:
        return
    owners = {j.target for j in k.model.cubes[cubes[0]].joins if j.relationship == "many_to_one"}
    owners |= {
        c.name
        for c in k.model.cubes.values()
        for j in c.joins
        if j.target == cubes[0] and j.relationship == "one_to_many"
    }
    named = [label for c in sorted(owners) if (label := facts.label(k.model, c, r.language))]
    if len(named) == 1:
        r.dimensions.append(named[0])
        r.use(asked[0].span)
        r.notes.append(f"group by {named[0]} ({asked[0].text!r}: the rows of {cubes[0]} belong to it)")


_WITH_BOUND = re.compile(r"\s+(?:with|who\s+(?:have|had)|that\s+(?:have|had)|having)\s+", re.IGNORECASE)
_LIST_LEAD = re.compile(
    r"(?:(?:show|list|give|get|find)(?:\s+me)?|which|what|all|the)(?:\s+(?:all|the|of the))*", re.IGNORECASE
)


def _rows_bounded(r: Reading, k: Knowledge, cubes: list[str]) -> None:
    """ "pitchers with 35+ saves": the rows a question opens with, followed by "with" and a bound on a
    measure, are the groups (the dimension the name resolves to; the bound then keeps the groups passing it)."""
    if r.dimensions or not r.marks_of("bound"):
        return
    for m in r.mentions:
        found = _WITH_BOUND.match(r.text, m.end)
        if not found or _only_value(m) or {t.path for t in m.of("measure")} & set(r.measures):
            continue
        if not any(b.start >= found.end() for b in r.marks_of("bound")):
            continue
        if r.text[: m.start].strip(" ,") and not _LIST_LEAD.fullmatch(r.text[: m.start].strip()):
            return  # only the rows the question opens with ("list (all) pitchers with ...")
        member = resolve([m], r, k, cubes)
        if member is not None:
            _add(r, member, [m], "rows bounded")
        return
