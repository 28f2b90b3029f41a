"""Find warehouse packs (see the package docstring) and read their ``pack.yaml``."""

from __future__ import annotations

import datetime as dt
import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import yaml

ROOT = Path(__file__).resolve().parent
DEMO_ROOT = ROOT.parent / "demo"  # the demo is a pack too, beside the package (its loader: ``demo.load``)


class PackError(ValueError):
    """A pack is missing or malformed."""


class DataLoader(Protocol):
    def __call__(self, url: str, schema: str) -> dict[str, int]: ...


@dataclass(frozen=True)
class Pack:
    name: str
    title: str
    schema: str
    today: dt.date | None
    root: Path
    questions: tuple[str, ...] = ()  # sample questions the pack answers (``cubesage demo run`` asks the demo's)

    @property
    def model_dir(self) -> Path:
        return self.root / "model"

    @property
    def glossary(self) -> Path:
        return self.root / "glossary.yaml"

    @property
    def few_shots(self) -> Path | None:
        path = self.root / "few_shots.yaml"
        return path if path.exists() else None

    @property
    def wiki_dir(self) -> Path:
        return self.root / "wiki"

    @property
    def suite(self) -> Path:
        return self.root / "suite.yaml"

    def loader(self) -> DataLoader:
        package = "demo" if self.root == DEMO_ROOT else f"warehouses.{self.name}"
        module = importlib.import_module(f"{package}.load")
        return module.load


def pack_names() -> list[str]:
    return sorted({*(p.parent.name for p in ROOT.glob("*/pack.yaml")), "demo"})


def get_pack(name: str) -> Pack:
    path = DEMO_ROOT / "pack.yaml" if name == "demo" else ROOT / name / "pack.yaml"
    if not path.is_file():
        raise PackError(f"no warehouse pack {name!r}; known: {', '.join(pack_names()) or 'none'}")
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict) or not data.get("schema"):
        raise PackError(f"{path}: expected a mapping with at least 'schema'")
    today = data.get("today")
    if isinstance(today, str):
        today = dt.date.fromisoformat(today)
    questions = data.get("questions") or []
    if not isinstance(questions, list):
        raise PackError(f"{path}: 'questions' must be a list of questions")
    return Pack(
        name=name,
        title=str(data.get("title") or name),
        schema=str(data["schema"]),
        today=today,
        root=path.parent,
        questions=tuple(str(q) for q in questions),
    )
