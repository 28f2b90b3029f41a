"""Load the business glossary (YAML) into semlayer: business_term rows, ``term:<id>`` and
``business_rule:<id>`` assets with embeddings. Idempotent; touches no other asset type.

File format (see demo/glossary.yaml)::

    terms:
      - {id: fines, term: late fees, language: en, synonyms: [罚金], definition: ..., maps_to: metric:loans.fee_sum}
      - {id: north, term: 北区, maps_to: dimension:branches.area, filter_value: north}
    business_rules:
      - {id: fines_returned_only, title: ..., text: ..., applies_to: [metric:loans.fee_sum]}
"""

from __future__ import annotations

import csv
import io
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cubesage_core import safe_yaml
from cubesage_core.db import connection
from cubesage_core.embeddings import Embedder, get_embedder
from fourengine.models import Asset
from fourengine.store import TermRow, delete_assets_except, upsert_assets, upsert_terms

ASSET_TYPES = {"table", "column", "metric", "dimension", "segment", "join"}
SOURCE = "glossary"


class GlossaryError(ValueError):
    """The glossary file is malformed."""


@dataclass
class GlossaryReport:
    terms: int
    business_rules: int
    embedded: int
    removed: int
    unresolved: list[str] = field(default_factory=list)  # mapped asset ids not (yet) in semlayer.asset


def _require(item: dict[str, Any], key: str, where: str) -> str:
    value = item.get(key)
    if not isinstance(value, str) or not value.strip():
        raise GlossaryError(f"{where}: field {key!r} is required (non-empty string)")
    return value.strip()


def parse_glossary(path: Path) -> tuple[list[TermRow], list[dict[str, Any]]]:
    """Terms and business rules of a glossary file, validated."""
    try:
        data = safe_yaml.load(Path(path).read_text(encoding="utf-8")) or {}
    except (OSError, safe_yaml.YamlLimitError) as exc:
        raise GlossaryError(f"cannot read glossary {path}: {exc}") from exc
    return parse_data(data, str(path))


def parse_data(data: Any, path: str = "glossary") -> tuple[list[TermRow], list[dict[str, Any]]]:
    """Terms and business rules of parsed glossary data (a mapping, or a bare list of terms)."""
    if isinstance(data, list):
        data = {"terms": data}
    if not isinstance(data, dict):
        raise GlossaryError(f"{path}: expected a mapping with 'terms' and 'business_rules'")
    terms: list[TermRow] = []
    seen: set[str] = set()
    for i, item in enumerate(data.get("terms") or []):
        where = f"{path}: terms[{i}]"
        if not isinstance(item, dict):
            raise GlossaryError(f"{where}: expected a mapping")
        term_id, canonical, maps_to = (
            _require(item, "id", where),
            _require(item, "term", where),
            _require(item, "maps_to", where),
        )
        asset_type = maps_to.split(":", 1)[0]
        if asset_type not in ASSET_TYPES or ":" not in maps_to:
            raise GlossaryError(f"{where}: maps_to must be '<type>:<name>' with type in {sorted(ASSET_TYPES)}")
        if term_id in seen:
            raise GlossaryError(f"{where}: duplicate term id {term_id!r}")
        seen.add(term_id)
        synonyms = [str(s) for s in item.get("synonyms") or []]
        value = item.get("filter_value")
        terms.append(
            TermRow(
                term_id,
                canonical,
                synonyms,
                str(item.get("language", "en")),
                str(item.get("definition", "")),
                asset_type,
                maps_to,
                None if value is None else str(value),
            )
        )
    rules: list[dict[str, Any]] = []
    for i, item in enumerate(data.get("business_rules") or []):
        where = f"{path}: business_rules[{i}]"
        if not isinstance(item, dict):
            raise GlossaryError(f"{where}: expected a mapping")
        rules.append(
            {
                "id": _require(item, "id", where),
                "title": _require(item, "title", where),
                "text": _require(item, "text", where),
                "applies_to": list(item.get("applies_to") or []),
            }
        )
    return terms, rules


def _term_asset(t: TermRow) -> tuple[Asset, str]:
    meta = {
        "source": SOURCE,
        "term_id": t.term_id,
        "mapped_asset_id": t.mapped_asset_id,
        "mapped_asset_type": t.mapped_asset_type,
        "synonyms": t.synonyms,
        "language": t.language,
    }
    if t.filter_value is not None:
        meta["filter_value"] = t.filter_value
    description = t.definition + (f" Synonyms: {', '.join(t.synonyms)}." if t.synonyms else "")
    asset = Asset(f"term:{t.term_id}", "term", t.term_id, t.canonical_term, description.strip(), None, True, meta)
    return asset, " / ".join([t.canonical_term, *t.synonyms]) + (f": {t.definition}" if t.definition else "")


def _rule_asset(rule: dict[str, Any]) -> tuple[Asset, str]:
    meta = {"source": SOURCE, "applies_to": rule["applies_to"]}
    asset = Asset(
        f"business_rule:{rule['id']}", "business_rule", rule["id"], rule["title"], rule["text"], None, True, meta
    )
    return asset, f"{rule['title']}: {rule['text']}"


def load_glossary(url: str, path: Path, embedder: Embedder | None = None) -> GlossaryReport:
    """(Re)load the glossary at ``path`` into the semlayer of ``url`` (terms no longer in the file go)."""
    terms, rules = parse_glossary(path)
    return _write(url, terms, rules, embedder, replace=True)


def ingest_text(url: str, content: str, fmt: str = "yaml", embedder: Embedder | None = None) -> dict[str, Any]:
    """Upsert terms given as YAML (glossary format) or CSV (columns id, term, maps_to, synonyms separated by
    ``|``, language, definition, filter_value); nothing is removed. Returns the report as a dict."""
    if fmt == "yaml":
        try:
            data = safe_yaml.load(content) or {}
        except safe_yaml.YamlLimitError as exc:
            raise GlossaryError(f"glossary: {exc}") from exc
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(content)))
        data = {
            "terms": [
                {
                    **r,
                    "synonyms": [s.strip() for s in (r.get("synonyms") or "").split("|") if s.strip()],
                    "filter_value": r.get("filter_value") or None,
                }
                for r in rows
            ]
        }
    else:
        raise GlossaryError(f"glossary format must be 'yaml' or 'csv', got {fmt!r}")
    terms, rules = parse_data(data)
    return asdict(_write(url, terms, rules, embedder, replace=False))


def _write(
    url: str,
    terms: list[TermRow],
    rules: list[dict[str, Any]],
    embedder: Embedder | None,
    *,
    replace: bool,
) -> GlossaryReport:
    embedder = embedder or get_embedder()
    pairs = [_term_asset(t) for t in terms] + [_rule_asset(r) for r in rules]
    removed = 0
    with connection(url) as conn, conn.transaction():
        if replace:
            removed = conn.execute(
                """DELETE FROM semlayer.business_term bt USING semlayer.asset a
                   WHERE a.asset_id = 'term:' || bt.term_id AND a.meta->>'source' = %s
                     AND NOT (bt.term_id = ANY(%s))""",
                (SOURCE, [t.term_id for t in terms]),
            ).rowcount
            removed += delete_assets_except(conn, "term", [a.asset_id for a, _ in pairs], "term:")
            removed += delete_assets_except(conn, "business_rule", [a.asset_id for a, _ in pairs], "business_rule:")
        upsert_terms(conn, terms)
        embedded = upsert_assets(conn, [a for a, _ in pairs], [t for _, t in pairs], embedder)
        known = {
            r[0]
            for r in conn.execute(
                "SELECT asset_id FROM semlayer.asset WHERE asset_id = ANY(%s)", ([t.mapped_asset_id for t in terms],)
            ).fetchall()
        }
    unresolved = sorted(
        {
            t.mapped_asset_id
            for t in terms
            if t.mapped_asset_id is not None  # maps_to is required
            and t.mapped_asset_id not in known
        }
    )
    return GlossaryReport(len(terms), len(rules), embedded, removed, unresolved)
