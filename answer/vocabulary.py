"""Display vocabulary of answers: member formats, types and titles from the Cube model, labels and value
names from the glossary, short column labels from the detail vocabulary.

The glossary (``settings.glossary``, the file the semlayer ``business_term`` rows are loaded from)
names metrics, dimensions and filter values in both languages; the Cube model says which measures are
percents or currency, which members are times, keys or additive sums, and titles every member; the detail
vocabulary file (``settings.detail_vocabulary``) may name columns by their last part (``labels``).
Each is read once per path; a missing or broken file gives an empty vocabulary (raw names are shown).
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from cube_models.errors import ModelError
from cube_models.model import Dimension, Measure, load_model
from cubesage_core.settings import get_settings
from fourengine.glossary import GlossaryError, parse_glossary

_CJK = re.compile(r"[\u4e00-\u9fff]")
KEY_NAME = re.compile(r"(^|_)id$|key$", re.IGNORECASE)  # "member_id", "o_orderkey": identifiers, not amounts
YEAR_NAME = re.compile(r"(^|[_\s])years?($|[_\s])|年", re.IGNORECASE)  # "Season year", "year_built": 2018, not 2,018


ADDITIVE = frozenset({"sum", "count", "count_distinct", "count_distinct_approx", "running_total"})


@dataclass
class Vocabulary:
    formats: dict[str, str] = field(default_factory=dict)  # member path -> Cube format ("percent", "currency")
    member_labels: dict[tuple[str, str], str] = field(default_factory=dict)  # (member or cube, lang) -> label
    value_labels: dict[tuple[str, str, str], str] = field(default_factory=dict)  # (cube, value.lower(), lang)
    types: dict[str, str] = field(default_factory=dict)  # member path -> Cube type ("sum", "time", "string")
    keys: frozenset[str] = frozenset()  # dimensions that identify rows (primary keys, ``*_id`` numbers)
    years: frozenset[str] = frozenset()  # number dimensions that hold years ("Season year"), shown as written
    column_labels: dict[tuple[str, str], str] = field(default_factory=dict)  # (column's last part, lang) -> label

    def member_format(self, column: str) -> str | None:
        return self.formats.get(column)

    def member_type(self, column: str) -> str | None:
        """The Cube type of a member ("sum", "number", "time", "string"...), None when the model lacks it."""
        return self.types.get(column)

    def additive(self, column: str) -> bool:
        """Whether values of the measure add up across groups (sums and counts, not ratios or averages)."""
        return self.types.get(column) in ADDITIVE

    def is_key(self, column: str) -> bool:
        """A column that identifies rows: a key dimension of the model, or a column outside the model named
        like one ("invoice_id" of a detail table); shown without thousands separators."""
        if column in self.types:
            return column in self.keys
        return bool(KEY_NAME.search(column.rsplit(".", 1)[-1]))

    def member_label(self, column: str, language: str) -> str | None:
        return self.member_labels.get((column, language))

    def column_label(self, name: str, language: str) -> str | None:
        """The short label of a column by its last part ("title_zh", "zh" -> "国家"), when one is configured."""
        return self.column_labels.get((name, language))

    def value_label(self, column: str, value: str, language: str) -> str | None:
        """The name of a dimension value in ``language`` ("countries.country_code", "DE", "zh" -> "德国")."""
        cube = column.split(".", 1)[0]
        return self.value_labels.get((cube, value.lower(), language))


def _first(names: list[str], zh: bool) -> str | None:
    return next((n for n in names if bool(_CJK.search(n)) == zh), None)


def _column_labels(detail_vocabulary: Path | None) -> dict[tuple[str, str], str]:
    from router.detail.schema import VocabularyError, load_vocabulary

    try:
        labels = load_vocabulary(detail_vocabulary).get("labels") or {}
        return {(str(name), str(lang)): str(text) for lang, names in labels.items() for name, text in names.items()}
    except (VocabularyError, AttributeError):
        return {}


def build(model_dir: Path | None, glossary: Path | None, detail_vocabulary: Path | None = None) -> Vocabulary:
    vocab = Vocabulary(column_labels=_column_labels(detail_vocabulary))
    titles: dict[str, str] = {}
    with contextlib.suppress(ModelError, OSError):
        model = load_model(model_dir) if model_dir else None
        members: list[Measure | Dimension] = [*model.measures(), *model.dimensions()] if model is not None else []
        vocab.formats = {m.path: m.format for m in members if m.format}
        vocab.types = {m.path: m.type for m in members}
        titles = {m.path: m.title for m in [*members, *(model.segments() if model else [])] if m.title}
        dims = model.dimensions() if model is not None else []
        vocab.keys = frozenset(
            d.path for d in dims if d.primary_key or (d.type == "number" and KEY_NAME.search(d.name))
        )
        vocab.years = frozenset(
            d.path for d in dims if d.type == "number" and YEAR_NAME.search(f"{d.name} {d.title or ''}")
        )
    try:
        terms, _ = parse_glossary(glossary) if glossary else ([], [])
    except GlossaryError:
        terms = []
    for t in terms:
        kind, _, member = (t.mapped_asset_id or "").partition(":")
        names = [t.canonical_term, *t.synonyms]
        zh, en = _first(names, True), _first(names, False)
        if kind in ("metric", "table") or (kind == "dimension" and t.filter_value is None):
            for lang, name in (("zh", zh), ("en", en)):
                if name:
                    vocab.member_labels.setdefault((member, lang), name)
        elif kind == "dimension" and t.filter_value is not None:
            cube = member.split(".", 1)[0]
            en_name = t.filter_value if t.language == "en" else en  # English terms keep the data's own value
            for key in {t.filter_value.lower(), *(n.lower() for n in names if not _CJK.search(n))}:
                for lang, name in (("zh", zh), ("en", en_name)):
                    if name:
                        vocab.value_labels.setdefault((cube, key, lang), name)
    for member, title in titles.items():  # members the glossary does not name keep their model title
        vocab.member_labels.setdefault((member, "en"), title)
    return vocab


@lru_cache(maxsize=4)
def _cached(model_dir: Path | None, glossary: Path | None, detail_vocabulary: Path | None) -> Vocabulary:
    return build(model_dir, glossary, detail_vocabulary)


def vocabulary() -> Vocabulary:
    settings = get_settings()
    return _cached(settings.model_dir, settings.glossary, settings.detail_vocabulary)
