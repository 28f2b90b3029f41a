"""Draft Cube YAML models from the PostgreSQL catalog: a starting point the user edits, as Cube's own
schema generation does.

One cube per table of the schema (``sql_table: schema.table``):

- dimensions: every column; the primary key is marked (a composite key becomes one concatenated
  string dimension); date/timestamp columns are ``time``, booleans ``boolean``, numbers ``number``,
  everything else ``string``;
- joins: a declared foreign key gives ``many_to_one`` from the referencing cube and ``one_to_many``
  back (a back edge is skipped when it would close a directed cycle, which the model loader forbids);
  an undeclared ``*_id`` / ``*key`` column whose name matches another table's single-column primary key
  gives the same pair marked ``meta: {guessed: true}``;
- measures: ``count``, sum/avg/min/max of every numeric column that is not a key, ``countDistinct``
  of every foreign key column;
- titles from names: a prefix all of a table's columns share (``o_`` in ``o_orderdate``) is dropped,
  snake_case becomes words, and a few generic trailing words are split off (``orderdate`` -> "Order date").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import yaml

NUMERIC = frozenset({"smallint", "integer", "bigint", "numeric", "real", "double precision", "decimal", "money"})
TIME = frozenset({"date", "timestamp without time zone", "timestamp with time zone"})
SKIPPED = frozenset({"bytea", "json", "jsonb", "xml", "tsvector", "ARRAY", "USER-DEFINED"})
# generic trailing words split off a run-together column name for its title
_SUFFIXES = (
    "date",
    "time",
    "key",
    "id",
    "name",
    "price",
    "status",
    "priority",
    "comment",
    "type",
    "size",
    "number",
    "count",
    "code",
    "total",
    "amount",
    "quantity",
    "mode",
    "phone",
    "address",
    "value",
)
# words that end in one of those but are one word ("discount" is no "dis count", "valid" no "val id")
_WHOLE_WORDS = frozenset(
    {"discount", "valid", "invalid", "liquid", "candidate", "mandate", "validate", "telephone", "paramount"}
)
_KEY_NAME = re.compile(r"(_id|key)$", re.IGNORECASE)


class Executor(Protocol):
    def execute(self, query: str, params: Sequence[object] | None = None, /) -> Any: ...


@dataclass(frozen=True)
class Column:
    name: str
    data_type: str


@dataclass(frozen=True)
class ForeignKey:
    columns: tuple[str, ...]
    table: str  # the referenced table (same schema)
    ref_columns: tuple[str, ...]


@dataclass(frozen=True)
class TableInfo:
    schema: str
    name: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...] = ()
    foreign_keys: tuple[ForeignKey, ...] = ()


@dataclass
class DraftReport:
    schema: str
    files: list[Path] = field(default_factory=list)
    cubes: int = 0
    joins: int = 0
    guessed_joins: int = 0


# ---- reading the catalog ------------------------------------------------------------------------
_COLUMNS = """SELECT c.table_name, c.column_name, c.data_type FROM information_schema.columns c
JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
WHERE c.table_schema = %s AND t.table_type IN ('BASE TABLE', 'VIEW') ORDER BY c.table_name, c.ordinal_position"""
_CONSTRAINTS = """SELECT con.contype, src.relname, ref.relname,
  ARRAY(SELECT a.attname FROM unnest(con.conkey) WITH ORDINALITY k(n, i)
        JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.i),
  ARRAY(SELECT a.attname FROM unnest(con.confkey) WITH ORDINALITY k(n, i)
        JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n ORDER BY k.i)
FROM pg_constraint con JOIN pg_class src ON src.oid = con.conrelid
JOIN pg_namespace ns ON ns.oid = src.relnamespace LEFT JOIN pg_class ref ON ref.oid = con.confrelid
WHERE ns.nspname = %s AND con.contype IN ('p', 'f') ORDER BY src.relname, con.conname"""


def read_catalog(conn: Executor, schema: str) -> list[TableInfo]:
    """Tables and views of ``schema`` with their columns, primary keys and foreign keys (within the schema)."""
    columns: dict[str, list[Column]] = {}
    for table, column, data_type in conn.execute(_COLUMNS, (schema,)).fetchall():
        columns.setdefault(table, []).append(Column(column, data_type))
    keys: dict[str, tuple[str, ...]] = {}
    fks: dict[str, list[ForeignKey]] = {}
    for kind, table, ref, cols, ref_cols in conn.execute(_CONSTRAINTS, (schema,)).fetchall():
        if kind == "p":
            keys[table] = tuple(cols)
        elif ref in columns:
            fks.setdefault(table, []).append(ForeignKey(tuple(cols), ref, tuple(ref_cols)))
    return [
        TableInfo(schema, name, tuple(cols), keys.get(name, ()), tuple(fks.get(name, ())))
        for name, cols in columns.items()
    ]


# ---- names and titles ---------------------------------------------------------------------------
def common_prefix(columns: Sequence[str]) -> str:
    """The ``x_`` prefix every column shares (``o_`` for ``o_orderkey, o_custkey``), else ''."""
    heads = {c.split("_", 1)[0] + "_" for c in columns if "_" in c}
    if len(columns) < 2 or len(heads) != 1 or any("_" not in c for c in columns):
        return ""
    prefix = heads.pop()
    return prefix if len(prefix) <= 4 and all(len(c) > len(prefix) for c in columns) else ""


def title_of(name: str, prefix: str = "") -> str:
    """``o_orderdate`` (prefix ``o_``) -> "Order date"; ``hourly_rate`` -> "Hourly rate"."""
    words: list[str] = []
    for part in filter(None, name.removeprefix(prefix).split("_")):
        words.extend(_split_suffix(part.lower()))
    text = " ".join(words) or name
    return text[:1].upper() + text[1:]


def _split_suffix(word: str) -> list[str]:
    if word in _WHOLE_WORDS:
        return [word]
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return [*_split_suffix(word[: -len(suffix)]), suffix]
    return [word]


def cube_name(table: str) -> str:
    name = re.sub(r"\W+", "_", table.lower()).strip("_") or "t"
    return name if name[0].isalpha() else f"t_{name}"


def _stem(column: str, prefix: str) -> str:
    """A key column without its table prefix and underscores: ``o_custkey`` -> ``custkey``."""
    return column.removeprefix(prefix).replace("_", "").lower()


# ---- cubes --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Link:
    child: str
    columns: tuple[str, ...]
    parent: str
    ref_columns: tuple[str, ...]
    guessed: bool


def _singular(word: str) -> str:
    return word[:-3] + "y" if word.endswith("ies") else word[:-1] if word.endswith("s") else word


def _links(tables: Sequence[TableInfo]) -> list[_Link]:
    """Declared foreign keys, then undeclared key-named columns matching one table's single primary key."""
    links = [_Link(t.name, fk.columns, fk.table, fk.ref_columns, False) for t in tables for fk in t.foreign_keys]
    declared = {(link.child, c) for link in links for c in link.columns}
    prefixes = {t.name: common_prefix([c.name for c in t.columns]) for t in tables}
    singles = {t.name: t.primary_key[0] for t in tables if len(t.primary_key) == 1}
    for table in tables:
        own = prefixes[table.name]
        for column in table.columns:
            if (
                (table.name, column.name) in declared
                or not _KEY_NAME.search(column.name)
                or table.primary_key == (column.name,)
            ):
                continue
            stem = _stem(column.name, own)
            matches = [
                p
                for p, pk in singles.items()
                if p != table.name
                and stem in (_stem(pk, prefixes[p]), _singular(p.lower()).replace("_", "") + _stem(pk, prefixes[p]))
            ]
            if len(matches) == 1:
                links.append(_Link(table.name, (column.name,), matches[0], (singles[matches[0]],), True))
    return links


def _creates_cycle(edges: dict[str, list[str]], source: str, target: str) -> bool:
    """Would ``source -> target`` close a directed cycle of 3+ cubes (a path target ~> source of 2+ edges)?"""
    stack, seen = [(target, 0)], set()
    while stack:
        node, depth = stack.pop()
        for nxt in edges.get(node, []):
            if nxt == source and depth + 1 >= 2:
                return True
            if nxt not in seen and nxt != source:
                seen.add(nxt)
                stack.append((nxt, depth + 1))
    return False


def _joins(tables: Sequence[TableInfo], names: dict[str, str]) -> dict[str, list[dict[str, Any]]]:
    """Join entries per table: many_to_one along every link, one_to_many back where no cycle results."""
    keyed = {t.name for t in tables if t.primary_key}
    out: dict[str, list[dict[str, Any]]] = {t.name: [] for t in tables}
    edges: dict[str, list[str]] = {}
    links = [link for link in _links(tables) if link.child in keyed and link.parent in keyed]
    for back in (False, True):
        for link in links:
            src, dst = (link.parent, link.child) if back else (link.child, link.parent)
            if dst in edges.get(src, []) or (back and _creates_cycle(edges, src, dst)):
                continue
            pairs = zip(link.columns, link.ref_columns, strict=True)
            own, other = (1, 0) if back else (0, 1)
            sql = " AND ".join(f"{{CUBE}}.{p[own]} = {{{names[dst]}}}.{p[other]}" for p in pairs)
            entry: dict[str, Any] = {
                "name": names[dst],
                "relationship": "one_to_many" if back else "many_to_one",
                "sql": sql,
            }
            if link.guessed:
                entry["meta"] = {"guessed": True}
            out[src].append(entry)
            edges.setdefault(src, []).append(dst)
    return out


def _dimension_type(data_type: str) -> str:
    if data_type in NUMERIC:
        return "number"
    if data_type in TIME:
        return "time"
    return "boolean" if data_type == "boolean" else "string"


def _dimensions(table: TableInfo, prefix: str) -> list[dict[str, Any]]:
    dims: list[dict[str, Any]] = []
    single = len(table.primary_key) == 1
    for column in table.columns:
        if column.data_type in SKIPPED:
            continue
        dim: dict[str, Any] = {
            "name": column.name,
            "title": title_of(column.name, prefix),
            "sql": column.name,
            "type": _dimension_type(column.data_type),
        }
        if single and column.name == table.primary_key[0]:
            dim.update(primary_key=True, public=True)
        dims.append(dim)
    if len(table.primary_key) > 1:
        sql = " || '-' || ".join(f"{{CUBE}}.{c}" for c in table.primary_key)
        dims.append({"name": "row_key", "title": "Row key", "sql": sql, "type": "string", "primary_key": True})
    return dims


def _measures(
    table: TableInfo, prefix: str, title: str, fk_columns: dict[str, str], taken: set[str]
) -> list[dict[str, Any]]:
    """``count``; sum/avg/min/max of numeric non-key columns; countDistinct of foreign keys."""
    measures: list[dict[str, Any]] = [
        {
            "name": "count",
            "title": title,
            "type": "count",
            "description": f"Number of rows of {table.schema}.{table.name}.",
        }
    ]
    keys = set(table.primary_key) | set(fk_columns)
    for column in table.columns:
        label = title_of(column.name, prefix)
        if column.name in fk_columns:
            measures.append(
                {
                    "name": f"{column.name}_distinct",
                    "title": f"Distinct {fk_columns[column.name]}",
                    "sql": column.name,
                    "type": "countDistinct",
                }
            )
        elif column.data_type in NUMERIC and column.name not in keys and not _KEY_NAME.search(column.name):
            for kind, word in (("sum", "Total"), ("avg", "Average"), ("min", "Minimum"), ("max", "Maximum")):
                measures.append(
                    {
                        "name": f"{column.name}_{kind}",
                        "title": f"{word} {label.lower()}",
                        "sql": column.name,
                        "type": kind,
                    }
                )
    for measure in measures:
        while measure["name"] in taken:
            measure["name"] += "_measure"
        taken.add(measure["name"])
    return measures


def _fk_titles(joins: list[dict[str, Any]], cube_titles: dict[str, str]) -> dict[str, str]:
    """Foreign key column -> the referenced cube's title, from one cube's many_to_one joins."""
    out = {}
    for join in joins:
        if join["relationship"] == "many_to_one":
            for column in re.findall(r"\{CUBE\}\.(\w+)", join["sql"]):
                out[column] = cube_titles[join["name"]]
    return out


def draft_cubes(tables: Sequence[TableInfo], taken: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """One Cube YAML cube (as a mapping) per table; ``taken``: cube names already used (other schemas)."""
    names: dict[str, str] = {}
    for table in tables:
        name = cube_name(table.name)
        names[table.name] = (
            name if name not in taken and name not in names.values() else cube_name(f"{table.schema}_{table.name}")
        )
    joins = _joins(tables, names)
    titles = {t.name: title_of(t.name) for t in tables}
    cubes = []
    for table in tables:
        prefix = common_prefix([c.name for c in table.columns])
        fk_columns = _fk_titles(joins[table.name], {names[t]: title.lower() for t, title in titles.items()})
        dims = _dimensions(table, prefix)
        cube: dict[str, Any] = {
            "name": names[table.name],
            "title": titles[table.name],
            "description": f"Drafted from {table.schema}.{table.name}; edit freely.",
            "sql_table": f"{table.schema}.{table.name}",
        }
        if joins[table.name]:
            cube["joins"] = joins[table.name]
        cube["dimensions"] = dims
        cube["measures"] = _measures(table, prefix, titles[table.name], fk_columns, {d["name"] for d in dims})
        cubes.append(cube)
    return cubes


# ---- files --------------------------------------------------------------------------------------
def write_cubes(cubes: Sequence[dict[str, Any]], out_dir: Path) -> list[Path]:
    """One ``<cube>.yml`` per cube in ``out_dir`` (created); existing files of the same name are replaced."""
    out_dir.mkdir(parents=True, exist_ok=True)
    files = []
    for cube in cubes:
        path = out_dir / f"{cube['name']}.yml"
        header = f"# drafted by 'cubesage model draft' from {cube['sql_table']}: review titles, measures and joins\n"
        path.write_text(
            header + yaml.safe_dump({"cubes": [cube]}, sort_keys=False, allow_unicode=True), encoding="utf-8"
        )
        files.append(path)
    return files


def draft_models(conn: Executor, schemas: Sequence[str], out_dir: Path) -> list[DraftReport]:
    """Draft every table of ``schemas`` into ``out_dir``; cube names stay unique across schemas."""
    reports: list[DraftReport] = []
    taken: set[str] = set()
    for schema in schemas:
        tables = read_catalog(conn, schema)
        cubes = draft_cubes(tables, frozenset(taken))
        taken |= {c["name"] for c in cubes}
        joins = [j for c in cubes for j in c.get("joins", [])]
        reports.append(
            DraftReport(
                schema,
                write_cubes(cubes, out_dir),
                len(cubes),
                len(joins),
                sum(1 for j in joins if j.get("meta", {}).get("guessed")),
            )
        )
    return reports
