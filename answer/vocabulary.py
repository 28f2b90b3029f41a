"""Display vocabulary of answers: measure formats from the Cube model, labels and value names from the glossary.

The glossary (``settings.glossary``, the file the semlayer ``business_term`` rows are loaded from)
names metrics and filter values in both languages; the Cube model says which measures are percents.
Both are read once per path; a missing or broken file gives an empty vocabulary (raw names are shown).
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from cube_models.errors import ModelError
from cube_models.model import load_model
from cubesage_core.settings import get_settings
from fourengine.glossary import GlossaryError, parse_glossary

_CJK = re.compile(r"[\u4e00-\u9fff]")


@dataclass
class Vocabulary:
    formats: dict[str, str] = field(default_factory=dict)  # member path -> Cube format ("percent", "currency")
    member_labels: dict[tuple[str, str], str] = field(default_factory=dict)  # (member path, lang) -> label
    value_labels: dict[tuple[str, str, str], str] = field(default_factory=dict)  # (cube, value.lower(), lang)

    def member_format(self, column: str) -> str | None:
        return self.formats.get(column)

    def member_label(self, column: str, language: str) -> str | None:
        return self.member_labels.get((column, language))

    def value_label(self, column: str, value: str, language: str) -> str | None:
        """The name of a dimension value in ``language`` ("regions.region_code", "south", "zh" -> "华南")."""
        cube = column.split(".", 1)[0]
        return self.value_labels.get((cube, value.lower(), language))


def _first(names: list[str], zh: bool) -> str | None:
    return next((n for n in names if bool(_CJK.search(n)) == zh), None)


def build(model_dir: Path | None, glossary: Path | None) -> Vocabulary:
    vocab = Vocabulary()
    titles: dict[str, str] = {}
    with contextlib.suppress(ModelError, OSError):
        measures = load_model(model_dir).measures() if model_dir else []
        vocab.formats = {m.path: m.format for m in measures if m.format}
        titles = {m.path: m.title for m in measures if m.title}
    try:
        terms, _ = parse_glossary(glossary) if glossary else ([], [])
    except GlossaryError:
        terms = []
    for t in terms:
        kind, _, member = (t.mapped_asset_id or "").partition(":")
        names = [t.canonical_term, *t.synonyms]
        zh, en = _first(names, True), _first(names, False)
        if kind == "metric":
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
    for member, title in titles.items():  # measures the glossary does not name keep their model title
        vocab.member_labels.setdefault((member, "en"), title)
    return vocab


@lru_cache(maxsize=4)
def _cached(model_dir: Path | None, glossary: Path | None) -> Vocabulary:
    return build(model_dir, glossary)


def vocabulary() -> Vocabulary:
    settings = get_settings()
    return _cached(settings.model_dir, settings.glossary)
