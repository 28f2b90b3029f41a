"""Link wiki pages to the warehouse tables they describe (``chunk.meta["tables"]``, read by table recall).

A page names its tables, in order of precedence:
1. front matter ``tables: [orders, sales.order_lines]`` (a ``---`` YAML block at the top of the page);
2. a table or cube name in its title (the file name or the first heading);
3. table or cube names found in its text;
4. else the model's nouns for a table in its title or text (``nouns``: cube title, singular and plural,
   synonyms, glossary words: "a loan", "每位读者"), so pages written in prose are linked too.
``names`` maps every name a page may use (table, ``schema.table``, cube name) to the qualified table and
``nouns`` pairs a qualified table with the pattern of its nouns; callers build both from the Cube model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from cubesage_core import safe_yaml
from sag_index.loaders import LoaderError, load_html, load_markdown, load_path, load_text
from sag_index.models import Chunk

_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
Nouns = Sequence[tuple[str, re.Pattern[str]]]  # (qualified table, the pattern of its nouns)
PAGE_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".text", ".html", ".htm"})
_HEADING = re.compile(r"^#{1,6}\s+(.+)$", re.MULTILINE)


def split_front_matter(text: str) -> tuple[dict[str, object], str]:
    """(front matter mapping, the rest of the page); no or malformed front matter -> ({}, text)."""
    match = _FRONT.match(text)
    if match is None:
        return {}, text
    try:
        data = safe_yaml.load(match.group(1)) or {}
    except safe_yaml.YamlLimitError:
        return {}, text
    return (data, text[match.end() :]) if isinstance(data, dict) else ({}, text)


def _named(text: str, names: Mapping[str, str]) -> list[str]:
    found = [
        table
        for name, table in names.items()
        if re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", text, re.IGNORECASE)
    ]
    return list(dict.fromkeys(found))


def page_tables(
    front: Mapping[str, object], title: str, text: str, names: Mapping[str, str], nouns: Nouns = ()
) -> list[str]:
    """The qualified tables a page describes (see the module docstring for the precedence)."""
    declared = front.get("tables")
    if isinstance(declared, str):
        declared = [declared]
    if isinstance(declared, list) and declared:
        return list(dict.fromkeys(names.get(str(t), names.get(str(t).lower(), str(t))) for t in declared))
    return (
        _named(title, names)
        or _named(text, names)
        or list(dict.fromkeys(table for table, pattern in nouns if pattern.search(f"{title}\n{text}")))
    )


def link_page(
    chunks: list[Chunk], front: Mapping[str, object], title: str, text: str, names: Mapping[str, str], nouns: Nouns = ()
) -> list[Chunk]:
    """Set ``meta["tables"]`` on every chunk of one page; returns the chunks."""
    tables = page_tables(front, title, text, names, nouns)
    for chunk in chunks:
        chunk.meta["tables"] = tables
    return chunks


def page_title(source: str, text: str) -> str:
    """The file name without suffixes (``orders.zh.md`` -> ``orders``) and the first heading."""
    heading = _HEADING.search(text)
    return f"{Path(source).name.split('.')[0]} {heading.group(1) if heading else ''}".strip()


def load_page(path: Path, names: Mapping[str, str], source: str | None = None, nouns: Nouns = ()) -> list[Chunk]:
    """One file: a page (.md .txt .html) without its front matter and linked to its tables; JSON records as is."""
    source = source or path.name
    suffix = path.suffix.lower()
    if suffix in {".json", ".jsonl"}:
        return load_path(path, source)
    if suffix not in PAGE_SUFFIXES and suffix:
        raise LoaderError(f"{path}: unsupported format {suffix!r} (use .md, .txt, .html, .json or .jsonl)")
    try:
        front, body = split_front_matter(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise LoaderError(f"{path}: not a readable UTF-8 file") from err
    return link_page(load_path_text(body, source, suffix), front, page_title(source, body), body, names, nouns)


def load_wiki(folder: Path, names: Mapping[str, str], nouns: Nouns = ()) -> list[Chunk]:
    """Every supported file under ``folder`` (sorted, so chunk order is stable), pages linked to tables."""
    if not folder.is_dir():
        raise LoaderError(f"{folder}: not a directory")
    return [
        chunk
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.suffix.lower() in {*PAGE_SUFFIXES, ".json", ".jsonl"}
        for chunk in load_page(path, names, str(path.relative_to(folder)), nouns)
    ]


def load_path_text(text: str, source: str, suffix: str) -> list[Chunk]:
    """Chunks of one page's text by its suffix (the loaders of ``sag_index.loaders``)."""
    if suffix in {".md", ".markdown"}:
        return load_markdown(text, source)
    if suffix in {".html", ".htm"}:
        return load_html(text, source)
    return load_text(text, source)
