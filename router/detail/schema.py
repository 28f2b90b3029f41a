"""The warehouse as the detail path sees it: a ``DetailCatalog`` derived from the Cube model.

``build_catalog(model, vocabulary=..., terms=...)`` reads every cube backed by one physical table
(``sql_table``, or a single-table ``sql`` SELECT): its table, primary key, plain columns, display
columns, time column, label column (entity names), head nouns and the foreign keys of its joins.
What a model cannot say (words in other languages, hand-tuned value patterns, display overrides)
comes from an optional vocabulary file (``load_vocabulary``); value words also come from glossary
terms with a ``filter_value`` (``glossary_terms``). Entries naming tables the model lacks are ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import psycopg
import sqlglot
import yaml
from sqlglot import exp

from cube_models.export import plain_sql
from cube_models.model import Cube, SemanticModel, load_model
from cube_models.physical import Physical, physical_table, plain_column
from cubesage_core.settings import Settings
from router.detail.joins import FkEdge, JoinGraph
from router.detail.vocabulary import ValueWord, key_reference, word_pattern
from router.parse import facts
from sag_index.warehouse import WarehouseMap

DISPLAY_CAP = 8
LABEL_NAME = re.compile(r"^(name|title|label)(_\w+)?$|_(name|title)$", re.IGNORECASE)
_FLAGS = re.IGNORECASE | re.ASCII
_RESERVED_ALIASES = frozenset(
    {
        "as",
        "at",
        "by",
        "do",
        "if",
        "in",
        "is",
        "no",
        "of",
        "on",
        "or",
        "to",
        "all",
        "and",
        "any",
        "asc",
        "end",
        "for",
        "not",
        "set",
        "top",
        "case",
        "desc",
        "from",
        "into",
        "join",
        "left",
        "like",
        "null",
        "only",
        "then",
        "true",
        "user",
        "when",
        "with",
    }
)


class VocabularyError(ValueError):
    """The detail vocabulary file is unreadable or malformed."""


@dataclass(frozen=True)
class TableSpec:
    """One listable warehouse table: ``columns`` are its plain columns the cube exposes (model order)."""

    table: str
    schema: str
    cube: str
    key: str
    alias: str
    columns: tuple[str, ...]
    display: tuple[tuple[str, str], ...]
    time: tuple[str, str] | None
    label: str | None  # the column naming a row ("supplier_name"): an entity table when set
    entity_type: str
    name_columns: tuple[str, ...] = ()  # columns whose values name a row (label first)
    prefix_words: int = 0  # also the first N words of a label ("Acme T9" for "Acme T9 drill")
    suffixes: tuple[tuple[str, str], ...] = ()  # (column, suffix): also value + suffix ("浙江" + "省")
    value: str | None = None  # the column its amounts are in (what its cube sums): "claims over 1000"
    name_parts: tuple[str, ...] = ()  # a name written over columns ("first last"): the row's whole name

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.table}"


@dataclass(frozen=True)
class Implied:
    """Listing ``target`` already means ``table.column = value`` ("returns" are returned shipments)."""

    target: str
    table: str
    column: str
    value: str


@dataclass(frozen=True)
class DetailCatalog:
    """Tables, join graph and words of one warehouse, for planning and building detail SELECTs."""

    tables: dict[str, TableSpec] = field(default_factory=dict)
    graph: JoinGraph = field(default_factory=JoinGraph)
    values: tuple[ValueWord, ...] = ()
    nouns: tuple[tuple[str, re.Pattern[str]], ...] = ()  # ordered: the first match names the table
    derived_nouns: tuple[tuple[str, re.Pattern[str]], ...] = ()  # the earliest match in the text wins
    key_nouns: tuple[tuple[str, re.Pattern[str]], ...] = ()  # a row named by its key ("order 8579")
    implied: tuple[Implied, ...] = ()
    localized: dict[str, dict[tuple[str, str], tuple[str, str]]] = field(default_factory=dict)
    known_names: frozenset[str] = frozenset()  # table and cube names a question may name by identifier

    @property
    def entity_tables(self) -> list[TableSpec]:
        return [t for t in self.tables.values() if t.label]

    def alias(self, table: str) -> str:
        return self.tables[table].alias

    def localize(self, column: tuple[str, str], language: str) -> tuple[str, str]:
        return self.localized.get(language, {}).get(column, column)


# ---- building ------------------------------------------------------------------------------------
def build_catalog(
    model: SemanticModel,
    *,
    default_schema: str = "warehouse",
    vocabulary: dict[str, Any] | None = None,
    terms: Iterable[dict[str, Any]] = (),
    observed: Iterable[dict[str, Any]] = (),
    table_words: dict[str, list[str]] | None = None,
) -> DetailCatalog:
    """The detail catalog of ``model``; ``vocabulary`` is a loaded vocabulary file, ``terms`` glossary rows
    (``canonical_term``, ``synonyms``, ``mapped_asset_id`` = ``dimension:cube.dim``, ``filter_value``);
    ``observed``: values read from the warehouse in the same shape, used for the columns no vocabulary
    word, glossary term or row name covers ("customers in 北京"); ``table_words``: cube -> the glossary's
    words for its table ("供应商", "songs"), head nouns beside the model's own."""
    vocab = vocabulary or {}
    try:
        catalog = _build(model, default_schema, vocab, list(terms), table_words or {})
    except (KeyError, TypeError, AttributeError, ValueError, re.error) as err:
        if isinstance(err, VocabularyError):
            raise
        raise VocabularyError(f"malformed detail vocabulary entry: {type(err).__name__}: {err}") from err
    physical = {name: found for name, cube in model.cubes.items() if (found := physical_table(cube, default_schema))}
    covered = {(w.table, w.column) for w in catalog.values}
    extra = tuple(
        w
        for w in _glossary_values(observed, model, physical)
        if w.table in catalog.tables
        and (w.table, w.column) not in covered
        and w.column not in catalog.tables[w.table].name_columns
    )
    return replace(catalog, values=catalog.values + extra) if extra else catalog


def _build(
    model: SemanticModel,
    default_schema: str,
    vocab: dict[str, Any],
    terms: list[dict[str, Any]],
    table_words: dict[str, list[str]],
) -> DetailCatalog:
    overrides: dict[str, dict[str, Any]] = {str(k): v or {} for k, v in (vocab.get("tables") or {}).items()}
    physical = {name: found for name, cube in model.cubes.items() if (found := physical_table(cube, default_schema))}
    edges = _edges(model, physical)
    tables = _table_specs(model, physical, overrides)
    for table, spec in list(tables.items()):
        display = overrides.get(table, {}).get("display")
        cols = (
            tuple(_qualify(table, str(c)) for c in display)
            if display
            else _display(spec, model.cubes[spec.cube], physical, tables, edges)
        )
        tables[table] = replace(spec, display=cols)
    values = _values(vocab, tables, _glossary_values(terms, model, physical), overrides)
    nouns = tuple(
        (str(n["table"]), re.compile(str(n["pattern"]), _FLAGS))
        for n in vocab.get("nouns") or []
        if str(n["table"]) in tables
    )
    implied = tuple(
        Implied(str(i["target"]), *_split(str(i["column"])), str(i["value"]))
        for i in vocab.get("implied") or []
        if str(i["target"]) in tables
    )
    localized = {
        str(lang): {
            _split(src): (_split(src)[0], str(dst)) for src, dst in (cols or {}).items() if _split(src)[0] in tables
        }
        for lang, cols in (vocab.get("localized") or {}).items()
    }
    return DetailCatalog(
        tables=tables,
        graph=JoinGraph(tuple(e for e in edges if e.child in tables and e.parent in tables)),
        values=values,
        nouns=nouns,
        derived_nouns=_derived_nouns(model, tables, table_words),
        key_nouns=_key_nouns(model, tables, table_words),
        implied=implied,
        localized=localized,
        known_names=frozenset({*tables, *(p.table for p in physical.values()), *model.cubes}),
    )


def _table_specs(
    model: SemanticModel, physical: dict[str, Physical], overrides: dict[str, dict[str, Any]]
) -> dict[str, TableSpec]:
    """Each table whose rows can be named (by a primary key), once, with the vocabulary's overrides (display
    columns left to fill)."""
    tables: dict[str, TableSpec] = {}
    aliases = {str(o["alias"]) for o in overrides.values() if o.get("alias")}
    for name, phys in physical.items():
        cube = model.cubes[name]
        key = next((phys.columns[d.name] for d in cube.primary_keys if d.name in phys.columns), None)
        if phys.table in tables or key is None:  # a table already described, or rows that cannot be named
            continue
        extra = overrides.get(phys.table, {})
        alias = str(extra.get("alias") or _alias(name, aliases))
        aliases.add(alias)
        label = extra.get("label") or _meta_label(cube, phys) or _label(cube, phys)
        names = tuple(str(n) for n in extra.get("names") or ([label] if label else []))
        tables[phys.table] = TableSpec(
            table=phys.table,
            schema=phys.schema,
            cube=name,
            key=key,
            alias=alias,
            columns=tuple(dict.fromkeys(phys.columns.values())),
            display=(),
            time=_time(model, name, physical),
            label=str(label) if label else None,
            entity_type=str(extra.get("entity_type") or cube.meta.get("entity_type") or _singular(name)),
            name_columns=names,
            prefix_words=int(extra.get("prefix_words") or 0),
            suffixes=tuple((str(c), str(s)) for c, s in (extra.get("suffixes") or {}).items()),
            value=extra.get("value") or _value_column(cube, phys),
            name_parts=_name_parts(model, cube, phys),
        )
    return tables


def _values(
    vocab: dict[str, Any], tables: dict[str, TableSpec], glossary: list[ValueWord], overrides: dict[str, dict[str, Any]]
) -> tuple[ValueWord, ...]:
    """The vocabulary's value words, then the glossary's for the columns the vocabulary does not cover."""
    values = _vocab_values(vocab, tables)
    covered = {(w.table, w.column) for w in values}
    if vocab.get("glossary_values", True) is False:  # not for the tables this file describes
        covered |= {(w.table, w.column) for w in glossary if w.table in overrides}
    return values + tuple(w for w in glossary if w.table in tables and (w.table, w.column) not in covered)


def load_vocabulary(path: Path | str | None) -> dict[str, Any]:
    """The vocabulary file at ``path`` (YAML); a missing file (or ``None``) is an empty vocabulary."""
    if path is None or not Path(path).is_file():
        return {}
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as err:
        raise VocabularyError(f"cannot read the detail vocabulary {path}: {err}") from err
    if not isinstance(data, dict):
        raise VocabularyError(f"the detail vocabulary {path} must be a mapping")
    return data


def table_terms(conn: psycopg.Connection) -> dict[str, list[str]]:
    """cube -> the words business terms give its table (``maps_to: table:<cube>``)."""
    out: dict[str, list[str]] = {}
    for term, synonyms, asset in conn.execute(
        "SELECT canonical_term, synonyms, mapped_asset_id FROM semlayer.business_term "
        "WHERE mapped_asset_type = 'table' ORDER BY term_id"
    ).fetchall():
        out.setdefault(str(asset).removeprefix("table:"), []).extend([term, *(synonyms or [])])
    return out


def glossary_terms(conn: psycopg.Connection) -> list[dict[str, Any]]:
    """Glossary terms that name one value of a dimension (``filter_value`` set), oldest id first."""
    cur = conn.execute(
        "SELECT canonical_term, synonyms, mapped_asset_id, filter_value FROM semlayer.business_term "
        "WHERE mapped_asset_type = 'dimension' AND filter_value IS NOT NULL ORDER BY term_id"
    )
    return [
        {"canonical_term": t, "synonyms": list(s or []), "mapped_asset_id": a, "filter_value": v}
        for t, s, a, v in cur.fetchall()
    ]


def _edges(model: SemanticModel, physical: dict[str, Physical]) -> list[FkEdge]:
    """Foreign keys from the cubes' joins: ``{CUBE}.x = {other}.y``; the many side is the child."""
    edges: list[FkEdge] = []
    for join in model.joins():
        source, target = physical.get(join.source), physical.get(join.target)
        if source is None or target is None or source.table == target.table:
            continue
        pair = _equality(model, join.source, join.sql)
        if pair is None:
            continue
        (left_cube, left_col), (right_cube, right_col) = pair
        if {left_cube, right_cube} != {join.source, join.target}:
            continue
        cols = {left_cube: left_col, right_cube: right_col}
        src_col, dst_col = source.column(cols[join.source]), target.column(cols[join.target])
        if src_col is None or dst_col is None:
            continue
        edge = (
            FkEdge(target.table, dst_col, source.table, src_col)
            if join.relationship == "one_to_many"
            else FkEdge(source.table, src_col, target.table, dst_col)
        )
        if edge not in edges and _reverse(edge) not in edges:
            edges.append(edge)
    return sorted(edges, key=lambda e: (e.child, e.column))


def _reverse(edge: FkEdge) -> FkEdge:
    return FkEdge(edge.parent, edge.parent_column, edge.child, edge.column)


def _equality(model: SemanticModel, cube_name: str, sql: str) -> tuple[tuple[str, str], tuple[str, str]] | None:
    """``{CUBE}.a = {other}.b`` -> ((cube, a), (other, b)), via the AST; None for anything else."""
    try:
        tree = sqlglot.parse_one(plain_sql(model.cubes[cube_name], sql, model), read="postgres")
    except (sqlglot.errors.ParseError, KeyError, ValueError):
        return None
    if not (isinstance(tree, exp.EQ) and isinstance(tree.this, exp.Column) and isinstance(tree.expression, exp.Column)):
        return None
    return (tree.this.table, tree.this.name), (tree.expression.table, tree.expression.name)


def _time(model: SemanticModel, cube_name: str, physical: dict[str, Physical]) -> tuple[str, str] | None:
    """The cube's time column, or the first one reached over many-to-one joins (as ``table, column``)."""
    path = model.cube_time_dimension(cube_name)
    if path is None:
        return None
    cube, _, dim = path.partition(".")
    phys = physical.get(cube)
    if phys is None or dim not in phys.columns:
        return None
    return phys.table, phys.columns[dim]


def _value_column(cube: Cube, phys: Physical) -> str | None:
    """The plain column the cube's first sum (else avg, max, min) measure aggregates: the table's amount."""
    for kind in ("sum", "avg", "max", "min"):
        for measure in cube.measures.values():
            sql = (measure.sql or "").strip()
            if measure.type == kind and (plain := plain_column(cube.name, sql)) and (column := phys.column(plain)):
                return column
    return None


def _meta_label(cube: Cube, phys: Physical) -> str | None:
    """The column ``meta.detail_label`` names (a plain-column dimension or a column of the table); None for a
    dimension that is an expression ("first || ' ' || last"): rows are then named by the first name-like
    column, as without the key."""
    named = str(cube.meta.get("detail_label") or "")
    if named in phys.columns:
        return phys.columns[named]
    return named if named and named in phys.columns.values() else None


def _name_parts(model: SemanticModel, cube: Cube, phys: Physical) -> tuple[str, ...]:
    """The columns of the cube's label when it joins columns of its table with spaces or punctuation
    (``{CUBE}.first_name || ' ' || {CUBE}.last_name``): the whole name of a row ("Helena Holý"); else ()."""
    path = facts.label(model, cube.name)
    dim = cube.dimensions.get(path.split(".", 1)[1]) if path else None
    if dim is None or plain_column(cube.name, dim.sql):
        return ()
    try:
        tree = sqlglot.parse_one(plain_sql(cube, dim.sql, model), read="postgres")
    except (sqlglot.errors.ParseError, KeyError, ValueError):
        return ()
    parts: list[str] = []
    for node in tree.walk(bfs=False):
        if isinstance(node, exp.Column):
            parts.append(phys.column(node.name) or "")
        elif not isinstance(node, (exp.DPipe, exp.Concat, exp.Literal, exp.Identifier, exp.Paren)) or (
            isinstance(node, exp.Literal) and node.is_string and node.name.strip(" ,.-")
        ):
            return ()  # a function, a subquery or words between the columns: no plain whole name
    return tuple(parts) if len(parts) >= 2 and all(parts) else ()


def _label(cube: Cube, phys: Physical) -> str | None:
    """The first public string dimension called like a name (``*_name``, ``name``, ``title``...)."""
    for dim in cube.dimensions.values():
        if (
            dim.type == "string"
            and dim.public
            and not dim.primary_key
            and dim.name in phys.columns
            and LABEL_NAME.search(dim.name)
        ):
            return phys.columns[dim.name]
    return None


def _display(
    spec: TableSpec, cube: Cube, physical: dict[str, Physical], tables: dict[str, TableSpec], edges: list[FkEdge]
) -> tuple[tuple[str, str], ...]:
    """Primary key, then the public plain-column dimensions; a foreign key shows its parent's label."""
    parents = {e.column: tables[e.parent] for e in edges if e.child == spec.table and e.parent in tables}
    out = [(spec.table, spec.key)]
    for dim in cube.dimensions.values():
        column = physical[cube.name].columns.get(dim.name)
        if column is None or not dim.public or column == spec.key:
            continue
        parent = parents.get(column)
        shown = (parent.table, parent.label) if parent is not None and parent.label else (spec.table, column)
        if shown not in out:
            out.append(shown)
    return tuple(out[:DISPLAY_CAP])


# ---- words -------------------------------------------------------------------------------------
def _vocab_values(vocab: dict[str, Any], tables: dict[str, TableSpec]) -> tuple[ValueWord, ...]:
    out = []
    for item in vocab.get("values") or []:
        table, column = _split(str(item["column"]))
        if table in tables:
            out.append(ValueWord(table, column, str(item["value"]), re.compile(str(item["pattern"]), _FLAGS)))
    return tuple(out)


def _glossary_values(
    terms: Iterable[dict[str, Any]], model: SemanticModel, physical: dict[str, Physical]
) -> list[ValueWord]:
    """One value word per glossary term mapped to a plain-column dimension: its term and synonyms."""
    out = []
    for term in terms:
        member = str(term.get("mapped_asset_id") or "").removeprefix("dimension:")
        cube, _, dim = member.partition(".")
        phys = physical.get(cube)
        if phys is None or dim not in phys.columns or term.get("filter_value") is None:
            continue
        words = [str(term["canonical_term"]), *[str(s) for s in term.get("synonyms") or []]]
        out.append(ValueWord(phys.table, phys.columns[dim], str(term["filter_value"]), word_pattern(words)))
    return out


def _derived_nouns(
    model: SemanticModel, tables: dict[str, TableSpec], table_words: dict[str, list[str]]
) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Head nouns from the model: cube name and title, singular and plural, ``meta.synonyms`` and the
    glossary's words for the table."""
    out = []
    for spec in tables.values():
        words = _words(spec, model, table_words)
        forms = {f for w in words for f in (w, _singular(w), _plural(_singular(w)))}
        out.append((spec.table, word_pattern(sorted(forms, key=len, reverse=True), spaced=True)))
    return tuple(out)


def _key_nouns(
    model: SemanticModel, tables: dict[str, TableSpec], table_words: dict[str, list[str]]
) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Per table, its nouns in the singular followed by a row key ("invoice 8579", "发票8579")."""
    return tuple(
        (spec.table, key_reference([spec.entity_type, *map(_singular, _words(spec, model, table_words))]))
        for spec in tables.values()
    )


def _words(spec: TableSpec, model: SemanticModel, table_words: dict[str, list[str]]) -> set[str]:
    """The model's and the glossary's words for the table of ``spec``, lower case."""
    cube = model.cubes[spec.cube]
    words = {spec.cube, cube.title, *[str(s) for s in cube.meta.get("synonyms") or []], *table_words.get(spec.cube, [])}
    return {w.lower() for w in words if w}


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _plural(word: str) -> str:
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    return word + "s"


def _alias(cube_name: str, taken: set[str]) -> str:
    """Initials of the cube name (``invoice_lines`` -> ``il``), made unique and never an SQL keyword."""
    base = "".join(part[0] for part in re.split(r"[_\W]+", cube_name.lower()) if part) or "t"
    alias, n = base, 1
    while alias in taken or alias in _RESERVED_ALIASES or not alias[0].isalpha():
        n += 1
        alias = f"{base}{n}" if base[0].isalpha() else f"t{n}"
    return alias


# ---- small helpers -------------------------------------------------------------------------------
def _split(column: str) -> tuple[str, str]:
    table, _, name = column.rpartition(".")
    if not table:
        raise VocabularyError(f"column {column!r} must be written table.column")
    return table, name


def _qualify(table: str, column: str) -> tuple[str, str]:
    return _split(column) if "." in column else (table, column)


def catalog_for(settings: Settings, conn: psycopg.Connection, index: Any = None) -> DetailCatalog:
    """The catalog of the configured model folder, vocabulary file, glossary and warehouse values
    (``index``: the model's ``ValueIndex`` when the caller has it, else read here)."""
    from router.aggregate.values import ValueIndex

    vocabulary = load_vocabulary(settings.detail_vocabulary)
    model = load_model(settings.model_folder())
    index = index or ValueIndex.load(conn, model, settings.warehouse_schema)
    observed = [
        {"canonical_term": surface, "synonyms": [], "mapped_asset_id": f"dimension:{member}", "filter_value": value}
        for surface, pairs in index.surfaces.items()
        for member, value in pairs
    ]
    return build_catalog(
        model,
        default_schema=settings.warehouse_schema,
        vocabulary=vocabulary,
        terms=glossary_terms(conn),
        observed=observed,
        table_words=table_terms(conn),
    )


def warehouse_map(settings: Settings, conn: psycopg.Connection) -> WarehouseMap:
    """What SAG indexing needs from the model: every name of a table (table, ``schema.table``, cube) -> its
    qualified table, the nouns of each table (the vocabulary's and the model's: wiki pages in prose), and the
    entity tables whose rows are indexed (the catalog's label and key columns)."""
    catalog = catalog_for(settings, conn)
    names: dict[str, str] = {}
    for spec in catalog.tables.values():
        for name in (spec.qualified, spec.table, spec.cube):
            names.setdefault(name, spec.qualified)
    nouns = tuple(
        (catalog.tables[table].qualified, pattern) for table, pattern in (*catalog.nouns, *catalog.derived_nouns)
    )
    return WarehouseMap(tables=names, rows=tuple(catalog.entity_tables), nouns=nouns)
