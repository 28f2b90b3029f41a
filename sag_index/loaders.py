"""Document loaders: markdown (ATX heading-strict split), plain text, HTML and JSON/JSONL records.

Every loader returns ``Chunk`` objects whose id is a content hash of (source, heading, text),
so loading the same document twice yields the same ids and re-indexing is idempotent.
SAG's own loader accepts markdown with ``#`` headings only; text without headings, HTML and
JSON records are first-class here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from sag_index._text import stable_id
from sag_index.errors import LoaderError
from sag_index.models import Chunk, SourceKind

_ATX = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
MAX_CHUNK_CHARS = 4000


def make_chunk(
    source: str,
    text: str,
    heading: str = "",
    position: int = 0,
    source_type: str = "text",
    kind: SourceKind = "doc",
    meta: dict[str, Any] | None = None,
) -> Chunk:
    text = text.strip()
    return Chunk(
        chunk_id=stable_id(source, heading, text),
        source=source,
        text=text,
        heading=heading,
        position=position,
        source_type=source_type,
        kind=kind,
        meta=meta or {},
    )


def load_markdown(text: str, source: str) -> list[Chunk]:
    """Heading-strict split: each ATX heading starts a chunk; its heading path is the chunk heading.

    Text before the first heading becomes its own chunk (headed by the document title if known).
    Headings inside fenced code blocks do not split. A document without any heading falls back
    to the plain-text loader.
    """
    sections: list[tuple[list[str], list[str]]] = [([], [])]
    path: list[str] = []
    in_fence = False
    for line in text.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        match = None if in_fence else _ATX.match(line)
        if match:
            level = len(match.group(1))
            path = [*path[: level - 1], match.group(2).strip()]
            sections.append((list(path), []))
        else:
            sections[-1][1].append(line)
    if len(sections) == 1:
        return load_text(text, source)
    chunks: list[Chunk] = []
    for heading_path, lines in sections:
        body = "\n".join(lines).strip()
        if not body and not heading_path:
            continue
        heading = " / ".join(heading_path)
        if not body:
            continue  # a heading directly followed by a sub-heading: its path lives on in the child
        full = f"{heading_path[-1]}\n{body}" if heading_path else body
        for part in _split_long(full):
            chunks.append(make_chunk(source, part, heading, len(chunks), "markdown"))
    return chunks


def load_text(text: str, source: str, title: str = "") -> list[Chunk]:
    """Plain text: paragraphs packed into chunks of at most ``MAX_CHUNK_CHARS`` characters."""
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    chunks: list[Chunk] = []
    buffer = ""
    for para in paragraphs:
        if buffer and len(buffer) + len(para) + 2 > MAX_CHUNK_CHARS:
            chunks.append(make_chunk(source, buffer, title, len(chunks), "text"))
            buffer = ""
        buffer = f"{buffer}\n\n{para}" if buffer else para
    if buffer:
        for part in _split_long(buffer):
            chunks.append(make_chunk(source, part, title, len(chunks), "text"))
    return chunks


class _HtmlText(HTMLParser):
    """Collects visible text; block elements end paragraphs; h1-h6 start sections."""

    BLOCKS = frozenset({"p", "div", "li", "tr", "br", "table", "ul", "ol", "section", "article", "pre"})
    SKIP = frozenset({"script", "style", "head", "noscript"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sections: list[tuple[str, list[str]]] = [("", [])]
        self.current: list[str] = []
        self.heading: list[str] | None = None
        self.skip_depth = 0
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self.skip_depth += 1
        if tag == "title":
            self._in_title = True
        if re.fullmatch(r"h[1-6]", tag):
            self._flush()
            self.heading = []
        elif tag in self.BLOCKS or tag in {"td", "th"}:
            self.current.append("\n" if tag in self.BLOCKS else " ")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP:
            self.skip_depth = max(self.skip_depth - 1, 0)
        if tag == "title":
            self._in_title = False
        if re.fullmatch(r"h[1-6]", tag) and self.heading is not None:
            self.sections.append((" ".join("".join(self.heading).split()), []))
            self.heading = None
        elif tag in self.BLOCKS:
            self.current.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
            return
        if self.skip_depth:
            return
        if self.heading is not None:
            self.heading.append(data)
        else:
            self.current.append(data)

    def _flush(self) -> None:
        self.sections[-1][1].append("".join(self.current))
        self.current = []

    def result(self) -> list[tuple[str, str]]:
        self._flush()
        out = []
        for heading, parts in self.sections:
            text = "\n".join(line.strip() for line in "".join(parts).splitlines())
            text = re.sub(r"\n{3,}", "\n\n", text).strip()
            out.append((heading, text))
        return out


def load_html(text: str, source: str) -> list[Chunk]:
    """HTML: visible text only; ``<h1>``..``<h6>`` split sections, otherwise paragraphs are packed."""
    parser = _HtmlText()
    try:
        parser.feed(text)
        parser.close()
    except Exception as err:
        raise LoaderError(f"{source}: cannot parse HTML: {err}") from err
    title = " ".join(parser.title.split())
    chunks: list[Chunk] = []
    for heading, body in parser.result():
        if not body:
            continue
        head = heading or title
        full = f"{head}\n{body}" if head and not body.startswith(head) else body
        for part in _split_long(full):
            chunks.append(make_chunk(source, part, head, len(chunks), "html"))
    return chunks


def record_text(record: dict[str, Any]) -> str:
    """A JSON record as one line of ``key: value`` pairs (the chunk text of a record)."""
    return "; ".join(f"{key}: {value}" for key, value in record.items() if value not in (None, ""))


def load_json_records(
    records: Iterable[Any], source: str, text_field: str | None = None, title_field: str | None = None
) -> list[Chunk]:
    """One chunk per record. ``text_field``/``title_field`` pick the text and heading when given."""
    chunks: list[Chunk] = []
    for i, record in enumerate(records):
        if not isinstance(record, dict):
            raise LoaderError(f"{source}: record {i} is {type(record).__name__}, expected an object")
        text = str(record.get(text_field, "")) if text_field else record_text(record)
        title = str(record.get(title_field, "")) if title_field else ""
        if not text.strip():
            continue
        chunks.append(make_chunk(source, text, title, i, "json", meta={"record": record}))
    return chunks


def _read_json_records(path: Path) -> Iterator[Any]:
    raw = path.read_text(encoding="utf-8")
    try:
        if path.suffix == ".jsonl":
            for line_no, line in enumerate(raw.splitlines(), 1):
                if line.strip():
                    try:
                        yield json.loads(line)
                    except json.JSONDecodeError as err:
                        raise LoaderError(f"{path}:{line_no}: invalid JSON: {err.msg}") from err
            return
        data = json.loads(raw)
    except json.JSONDecodeError as err:
        raise LoaderError(f"{path}: invalid JSON: {err.msg} (line {err.lineno})") from err
    yield from data if isinstance(data, list) else [data]


def load_path(path: Path, source: str | None = None) -> list[Chunk]:
    """Load one file by suffix: .md/.markdown, .txt, .html/.htm, .json/.jsonl."""
    source = source or path.name
    if not path.is_file():
        raise LoaderError(f"{path}: no such file")
    suffix = path.suffix.lower()
    if suffix in {".json", ".jsonl"}:
        return load_json_records(_read_json_records(path), source)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise LoaderError(f"{path}: not UTF-8 text") from err
    if suffix in {".md", ".markdown"}:
        return load_markdown(text, source)
    if suffix in {".html", ".htm"}:
        return load_html(text, source)
    if suffix in {".txt", ".text", ""}:
        return load_text(text, source)
    raise LoaderError(f"{path}: unsupported format {suffix!r} (use .md, .txt, .html, .json or .jsonl)")


def load_dir(folder: Path) -> list[Chunk]:
    """Every supported file under ``folder`` (sorted, so chunk order is stable)."""
    if not folder.is_dir():
        raise LoaderError(f"{folder}: not a directory")
    chunks: list[Chunk] = []
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.suffix.lower() in {".md", ".markdown", ".txt", ".html", ".htm", ".json", ".jsonl"}:
            chunks.extend(load_path(path, str(path.relative_to(folder))))
    return chunks


def _split_long(text: str) -> list[str]:
    """Split an over-long section on paragraph boundaries (a single huge paragraph is cut hard)."""
    if len(text) <= MAX_CHUNK_CHARS:
        return [text]
    parts: list[str] = []
    buffer = ""
    for para in re.split(r"\n\s*\n", text):
        while len(para) > MAX_CHUNK_CHARS:
            parts.append(para[:MAX_CHUNK_CHARS])
            para = para[MAX_CHUNK_CHARS:]
        if buffer and len(buffer) + len(para) + 2 > MAX_CHUNK_CHARS:
            parts.append(buffer)
            buffer = ""
        buffer = f"{buffer}\n\n{para}" if buffer else para
    if buffer:
        parts.append(buffer)
    return parts
