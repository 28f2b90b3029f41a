"""The retrieval context the aggregate path works from, in one shape whatever the caller passes.

Accepts the dict form ``{bindings: [{term_id, canonical_term, mapped_asset_type, mapped_asset_id,
filter_value?}], assets: [{id, type, name, score}], few_shots: [{question, cube_query}], filters?:
[{member, operator, values}], context_text?}``, fourengine's ``RetrievalResult`` (or its ``to_dict()``,
keys ``term_bindings``/``assets``/``few_shots``/``context``, the context's ``included`` naming what the
token budget kept), or an ``AggregateContext``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias

MEMBER_TYPES = ("metric", "measure", "dimension", "segment", "time_dimension")


class _HasToDict(Protocol):
    """A retrieval result (``fourengine.models.RetrievalResult``) or anything else with a dict form."""

    def to_dict(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Binding:
    term_id: str
    canonical_term: str
    mapped_asset_type: str
    mapped_asset_id: str
    filter_value: str | None = None
    matched: str = ""  # the question's words the term matched, when known


@dataclass(frozen=True)
class ContextAsset:
    id: str
    type: str
    name: str = ""
    score: float = 0.0
    title: str = ""


@dataclass
class AggregateContext:
    bindings: list[Binding] = field(default_factory=list)
    assets: list[ContextAsset] = field(default_factory=list)
    few_shots: list[dict[str, Any]] = field(default_factory=list)
    filters: list[dict[str, Any]] = field(default_factory=list)  # entity filters from the pipeline (values only)
    context_text: str = ""
    budgeted: frozenset[str] | None = None  # what the token budget rendered (asset ids, few_shot:<id>); None: unknown

    def rendered(self, ref: str) -> bool:
        """Whether the token budget rendered ``ref`` (an asset id or ``few_shot:<id>``); True when the context
        does not say what it rendered."""
        return self.budgeted is None or ref in self.budgeted

    def prompt_shots(self) -> list[dict[str, Any]]:
        """The few-shots a prompt shows: those the budgeted context kept (the question's complexity caps them,
        simple 2 / medium 4 / complex 6), every one when the context does not say."""
        return [s for s in self.few_shots if s.get("id") is None or self.rendered(f"few_shot:{s['id']}")]

    def prompt_assets(self) -> list[ContextAsset]:
        """The retrieved assets a prompt shows: those the budgeted context rendered, every one when it does not
        say (a tight budget lists fewer)."""
        return [a for a in self.assets if self.rendered(a.id)]

    @classmethod
    def of(cls, context: ContextLike) -> AggregateContext:
        if isinstance(context, AggregateContext):
            return context
        if context is None:
            return cls()
        context = context if isinstance(context, dict) else _dict_form(context)
        raw_bindings = context.get("bindings", context.get("term_bindings")) or []
        bindings = [
            Binding(
                str(b.get("term_id", "")),
                str(b.get("canonical_term", "")),
                str(b.get("mapped_asset_type", "")),
                str(b.get("mapped_asset_id", "")),
                None if b.get("filter_value") is None else str(b["filter_value"]),
                str(b.get("matched") or ""),
            )
            for b in raw_bindings
            if b.get("mapped_asset_id")
        ]
        assets = [
            ContextAsset(
                str(a.get("id") or a.get("asset_id")),
                str(a.get("type") or a.get("asset_type", "")),
                str(a.get("name", "")),
                float(a.get("score") or 0.0),
                str(a.get("title") or ""),
            )
            for a in context.get("assets") or []
            if a.get("id") or a.get("asset_id")
        ]
        raw_context = context.get("context_text") or context.get("context") or ""
        text = raw_context.get("text", "") if isinstance(raw_context, dict) else str(raw_context)
        block = context.get("context")
        rendered = block.get("included") if isinstance(block, dict) else None
        return cls(
            bindings,
            assets,
            list(context.get("few_shots") or []),
            list(context.get("filters") or []),
            text,
            None if rendered is None else frozenset(rendered),
        )


def _dict_form(context: object) -> dict[str, Any]:
    to_dict = getattr(context, "to_dict", None)
    if to_dict is None:
        raise TypeError(f"unsupported aggregate context {type(context).__name__}")
    form: dict[str, Any] = to_dict()
    return form


def member_path(asset_id: str) -> str:
    """``metric:invoices.net_total`` -> ``invoices.net_total`` (ids without a type prefix are returned as is)."""
    kind, sep, body = asset_id.partition(":")
    return body if sep and kind in MEMBER_TYPES else asset_id


# what callers of the aggregate path pass as its retrieval context (see the module docstring)
ContextLike: TypeAlias = AggregateContext | dict[str, Any] | _HasToDict | None
