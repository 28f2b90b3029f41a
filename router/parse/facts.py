"""What the parser asks of the Cube model: the column behind a member, the measures over a column, a
cube's row count, key and label, join reachability, and the ``meta`` keys the parser reads.

``meta`` keys read (on measures or dimensions): ``synonyms`` (lexicon), ``better: lower|higher`` (which
way "best"/"worst" rank; default higher), ``time_dimension`` (what dates a measure, read by the model).
"""

from __future__ import annotations

import re
from collections import deque
from typing import Any

from router.parse.text import name_key, stems

_CUBE_REF = re.compile(r"\{CUBE\}\.|\{[a-z_]+\}\.", re.IGNORECASE)
LABEL_WORDS = stems("name title label")
_PART_NAMES = stems("first last middle given family sur")


def column(member: Any) -> str:
    """A member's SQL without cube references, lower case, spaces squeezed (its identity as a column)."""
    return column_sql(getattr(member, "sql", None) or "")


def distinct_column(model: Any, measure: Any) -> Any | None:
    """The public dimension a count-distinct measure counts the values of ("Number of carriers" ->
    Carrier), else None (also for a count of distinct keys: that counts rows)."""
    if getattr(measure, "type", "") not in ("count_distinct", "count_distinct_approx"):
        return None
    cube = model.cubes.get(measure.cube)
    found = [
        d
        for d in (cube.dimensions.values() if cube is not None else [])
        if d.public and d.type != "time" and not d.primary_key and column(d) == column(measure)
    ]
    return found[0] if found else None


def counts_distinct_values(model: Any, measures: list[str]) -> bool:
    """Every one of ``measures`` counts the distinct values of a column ("carriers flying" named only
    "Number of carriers"): a name of those only names the values."""
    return all(distinct_column(model, model.find_member(p)) is not None for p in measures)


def column_sql(sql: str) -> str:
    return re.sub(r"\s+", "", _CUBE_REF.sub("", str(sql))).lower()


def measures_over(model: Any, cube: str, sql: str, types: tuple[str, ...]) -> list[Any]:
    """The public unfiltered measures of ``cube`` of one of ``types`` over the column ``sql``."""
    found = model.cubes.get(cube)
    if found is None:
        return []
    return [m for m in found.measures.values() if m.public and m.type in types and not m.filters and column(m) == sql]


def numbers_aggregated(model: Any, measure: Any) -> list[Any]:
    """The public number dimensions over the column an unfiltered measure aggregates ("Average transit days"
    -> Transit days; "Worst departure delay", a max -> Departure delay)."""
    found = model.cubes.get(getattr(measure, "cube", ""))
    sql = column(measure)
    if found is None or not sql or getattr(measure, "filters", None):
        return []
    return [d for d in found.dimensions.values() if d.public and d.type == "number" and column(d) == sql]


def row_count(model: Any, cube: str) -> str | None:
    """The measure counting a cube's rows (type count without filters, or a distinct count of its key)."""
    found = model.cubes.get(cube)
    if found is None:
        return None
    keys = {column(d) for d in found.primary_keys}
    plain = [
        m
        for m in found.measures.values()
        if m.public
        and not m.filters
        and (m.type == "count" or (m.type.startswith("count_distinct") and column(m) in keys))
    ]
    plain.sort(key=lambda m: m.name != "count")
    return plain[0].path if plain else None


def primary_key(model: Any, cube: str) -> str | None:
    keys = model.cubes[cube].primary_keys
    return keys[0].path if keys else None


def label(model: Any, cube: str, language: str = "en") -> str | None:
    """The dimension naming a cube's rows: a public string dimension called or titled name/title/label
    (the question's language first for ``*_en``/``*_zh`` pairs), else None."""
    dims = [d for d in model.cubes[cube].dimensions.values() if d.public and d.type == "string" and not d.primary_key]

    own = set(name_key(cube)) | set(name_key(model.cubes[cube].title or ""))

    def rank(d: Any) -> tuple[int, int, int, int]:
        words = set(name_key(d.name)) | set(name_key(d.title or ""))
        named = any(w in words for w in LABEL_WORDS)
        # "name", "supplier_name", "full name" before "first name" / "last name"
        whole = (
            0
            if set(name_key(d.name)) == {"name"} or words & own or "full" in words
            else 2
            if words & _PART_NAMES
            else 1
        )
        suffix = d.name.rsplit("_", 1)[-1]
        lang = 0 if suffix == language else 1 if suffix not in ("en", "zh") else 2
        return (0 if named else 1, whole, lang, len(d.name))

    ranked = sorted(dims, key=rank)
    return ranked[0].path if ranked and rank(ranked[0])[0] == 0 else None


_NAME_QUALIFIERS = stems("full unique display")


def names_rows(model: Any, path: str) -> bool:
    """``path`` is a name of its cube's rows: the cube's label, or a string dimension whose name and title
    say only the rows' own words besides name words ("Player", ``player_name_unique`` of players), not
    another thing's ("Country name" of customers)."""
    cube = path.split(".", 1)[0]
    if cube not in model.cubes:
        return False
    if label(model, cube) == path:
        return True
    member = model.find_member(path)
    if member is None or member.type != "string" or member.primary_key:
        return False
    found = model.cubes[cube]
    synonyms = " ".join(str(s) for s in (found.meta or {}).get("synonyms") or [])
    own = set(name_key(cube)) | set(name_key(found.title or "")) | set(name_key(synonyms))
    said = (set(name_key(member.name)) | set(name_key(member.title or ""))) - LABEL_WORDS - _NAME_QUALIFIERS
    return bool(said) and said <= own


_CODE_WORDS = stems("code number no id identifier reference ref")


def _code_of(said: tuple[str, ...], own: set[str]) -> bool:
    """A title that is a code of the rows themselves: "Flight code" of flights, not "Billing postal code"."""
    return bool(set(said[-1:]) & _CODE_WORDS) and set(said[:-1]) <= own


def identity(model: Any, cube: str, language: str = "en") -> str | None:
    """What names a cube's rows to a reader: its label, else a public string code of it ("Flight code"): a
    string dimension whose title ends in code/number/id (the shortest such title)."""
    found = label(model, cube, language)
    if found is not None:
        return found
    own = set(name_key(cube)) | set(name_key(model.cubes[cube].title or ""))
    codes = [
        d
        for d in model.cubes[cube].dimensions.values()
        if d.public and d.type == "string" and not d.primary_key and _code_of(name_key(d.title or d.name), own)
    ]
    codes.sort(key=lambda d: len(d.title or d.name))
    return codes[0].path if codes else None


def referred(model: Any, cube: str) -> list[str]:
    """``cube``, then the cubes its rows refer to (many-to-one joins, either side's declaration), nearest first."""
    joins = [j for c in model.cubes.values() for j in c.joins if j.target in model.cubes]
    ups = [(j.source, j.target) for j in joins if j.relationship in ("many_to_one", "one_to_one")]
    ups += [(j.target, j.source) for j in joins if j.relationship in ("one_to_many", "one_to_one")]
    hops = {cube: 0}
    frontier = [cube]
    while frontier:
        step = {t: hops[c] + 1 for c in frontier for s, t in ups if s == c and t not in hops}
        hops.update(step)
        frontier = list(step)
    return sorted(hops, key=lambda c: hops[c])


def rows_under(model: Any, cube: str, apart: list[set[str]], named: set[str]) -> str | None:
    """The one cube of ``named`` (the cubes of members a question names) whose rows refer to ``cube``'s and to
    one cube of each set in ``apart`` (rows ``cube``'s do not refer to: a team, for players): "the Dodgers'
    highest-paid players" lists salaries, each naming its player and its team; None when not exactly one."""
    under = [
        c for c in named if c != cube and cube in (up := referred(model, c)) and all(cubes & set(up) for cubes in apart)
    ]
    return under[0] if len(under) == 1 else None


def reach(model: Any, start: str) -> dict[str, int]:
    """Cubes reachable from ``start`` along declared joins, with hop counts."""
    hops = {start: 0}
    queue = deque([start])
    while queue:
        cube = queue.popleft()
        for join in model.cubes[cube].joins:
            if join.target not in hops and join.target in model.cubes:
                hops[join.target] = hops[cube] + 1
                queue.append(join.target)
    return hops


def joined(model: Any, a: str, b: str) -> bool:
    """One cube's members can be asked with the other's (a join path either way)."""
    return b in reach(model, a) or a in reach(model, b)


def fk_column(model: Any, source: str, target: str) -> str | None:
    """The column of ``source`` its join to ``target`` uses (``{CUBE}.o_custkey = {customer}.c_custkey``); of
    a join on several columns, the first."""
    found = fk_columns(model, source, target)
    return found[0] if found else None


def fk_columns(model: Any, source: str, target: str) -> list[str]:
    """Every column of ``source`` its join to ``target`` uses ("{CUBE}.year_id = {teams}.year_id AND
    {CUBE}.team_id = {teams}.team_id": year_id and team_id), in the join's order."""
    join = next((j for j in model.cubes[source].joins if j.target == target), None)
    if join is None:
        return []
    other = re.escape(target)
    pairs = re.finditer(
        r"\{CUBE\}\.(\w+)\s*=\s*\{" + other + r"\}\.\w+|\{" + other + r"\}\.\w+\s*=\s*\{CUBE\}\.(\w+)", join.sql or ""
    )
    return [(m.group(1) or m.group(2)).lower() for m in pairs]


def amount_column(model: Any, cube: str) -> Any | None:
    """The numeric dimension a cube's sum measure adds up: what "invoices over $20" or "the biggest
    invoice" compare."""
    found = model.cubes.get(cube)
    if found is None:
        return None
    sums = [m for m in found.measures.values() if m.type == "sum"]
    sums = [m for m in sums if not m.filters] or sums  # "sales: the amount of closed deals" adds it up too
    dims = [
        d
        for d in found.dimensions.values()
        if d.type == "number" and not d.primary_key and column(d) in {column(m) for m in sums}
    ]
    if len(dims) > 1:  # several columns are added up (distance, air time): the one of money, if one is
        money = {column(m) for m in sums if getattr(m, "format", None) == "currency"}
        dims = [d for d in dims if getattr(d, "format", None) == "currency" or column(d) in money]
    return dims[0] if len(dims) == 1 else None


def better(member: Any) -> str:
    """``meta.better``: "lower" when a lower value is better (a return rate), else "higher"."""
    value = str((getattr(member, "meta", None) or {}).get("better", "higher")).lower()
    return "lower" if value in ("lower", "low", "less", "smaller") else "higher"


def is_numeric(member: Any) -> bool:
    return getattr(member, "kind", "") == "measure" or getattr(member, "type", "") == "number"


def title_words(member: Any) -> set[str]:
    """The words of a member's or cube's title and name."""
    return set(name_key(getattr(member, "title", "") or "")) | set(name_key(getattr(member, "name", "")))


def column_titled(model: Any, cubes: list[str], said: set[str]) -> Any | None:
    """The one numeric column of ``cubes`` (not a key or a reference to one) whose title has one of the
    ``said`` words ("balance" for "Account balance"); None when none or several do."""
    found = [
        d
        for c in cubes
        for d in model.cubes[c].dimensions.values()
        if d.type == "number"
        and not d.primary_key
        and d.public
        and not _KEYLIKE.search(d.name)
        and said & title_words(d)
    ]
    return found[0] if len(found) == 1 else None


_KEYLIKE = re.compile(r"(?:^|_)(?:id|key|fk)$|(?<=[a-z])(?:Id|Key)$")  # "customer_key": a reference, no quantity


def with_referred_labels(model: Any, cube: str, dimensions: list[str], language: str = "en") -> list[str]:
    """``dimensions`` of ``cube``'s rows with, after each column that refers to another cube's row (the
    column of a many-to-one join), that row's label: "Supplier key 793" reads as "Supplier#000000793"."""
    referred: dict[str, list[str]] = {}  # a joining column -> the labels of the rows it refers to
    for join in model.cubes[cube].joins:
        if join.relationship == "many_to_one" and join.target in model.cubes:
            fk, found = fk_column(model, cube, join.target), label(model, join.target, language)
            if fk and found:
                referred.setdefault(fk, []).append(found)
    out: list[str] = []
    for path in dimensions:
        out.append(path)
        member = model.find_member(path) if path.startswith(f"{cube}.") else None
        out += [f for f in referred.get(column(member), []) if f not in dimensions] if member is not None else []
    return list(dict.fromkeys(out))
