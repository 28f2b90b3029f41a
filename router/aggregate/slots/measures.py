"""The ``measures`` pass (what the question measures, its average form) and the ``guessed`` pass (a measure the
question does not name answers only a question whose every word binds)."""

from __future__ import annotations

import re

from cube_models.model import SemanticModel
from router.aggregate.context import AggregateContext, member_path
from router.aggregate.measure_match import match_measure, unit_twin
from router.aggregate.members import known_member, measure_cubes, same_column_averages
from router.aggregate.slots.base import METRIC_ASSET_TYPES, Slots, is_measure
from router.aggregate.slots.counts import asked_count
from router.aggregate.types import AggregateError, OutOfModelError
from router.intent.coverage import unbound_terms
from router.understanding.types import Understanding

MIN_ASSET_SCORE = 0.5
_AVERAGE = re.compile(r"\b(?:average|avg|mean)\b|平均|均值", re.IGNORECASE | re.ASCII)


def choose(s: Slots) -> None:
    """measures: bound metrics, a measure named by its words, an asked count, a measure named more loosely, a
    retrieved metric or a cached example's; "average ..." turns a sum into its average."""
    u = s.u
    cue = bool(u.granularity or u.ranking or u.comparison or u.dimensions)
    s.measures = averaged(
        choose_measures(s.ctx, s.model, s.notes, u.normalized, aggregate_cue=cue), s.model, u.normalized, s.notes
    )
    s.cubes = measure_cubes(s.measures)


def guessed(s: Slots) -> None:
    """Refuses a question answered by a guessed measure when some of its words bind to nothing."""
    _refuse_guessed_measure(s.u, s.ctx, s.model)


def choose_measures(
    ctx: AggregateContext, model: SemanticModel, notes: list[str], text: str = "", aggregate_cue: bool = False
) -> list[str]:
    """The query's measures, the first found of: bound metrics, a measure the question names by its words,
    a count the question asks for, a measure it names more loosely, a retrieved metric or cached example."""
    measures = [
        member_path(b.mapped_asset_id)
        for b in ctx.bindings
        if b.mapped_asset_type in METRIC_ASSET_TYPES and b.filter_value is None
    ]
    measures = [unit_twin(model, m, text) for m in dict.fromkeys(measures) if is_measure(model, m)]
    if measures:
        notes.append(f"measures from metric bindings: {', '.join(measures)}")
        return measures
    named = match_measure(model, text)
    if named is not None and named.strong:
        notes.append(f"measure {named.path}: its name's words {' '.join(named.words)!r} are in the question")
        return [unit_twin(model, named.path, text)]
    if count := asked_count(ctx, model, text, aggregate_cue, notes):
        return [count]
    if named is not None:
        notes.append(f"measure {named.path}: the question names {' '.join(named.words)!r}")
        return [unit_twin(model, named.path, text)]
    if retrieved := _retrieved_measures(ctx, model, notes):
        return retrieved
    raise OutOfModelError("no measure found for this question: name one of the model's metrics")


def _retrieved_measures(ctx: AggregateContext, model: SemanticModel, notes: list[str]) -> list[str] | None:
    """The best retrieved metric asset of the model, else the measures of the first cached example."""
    ranked = sorted(
        (a for a in ctx.assets if a.type in METRIC_ASSET_TYPES and a.score >= MIN_ASSET_SCORE),
        key=lambda a: a.score,
        reverse=True,
    )
    for asset in ranked:
        if is_measure(model, member_path(asset.id)):
            notes.append(f"measure from the top retrieved metric {asset.id} ({asset.score:.2f})")
            return [member_path(asset.id)]
    for shot in ctx.few_shots:
        shot_measures = [m for m in (shot.get("cube_query") or {}).get("measures", []) if is_measure(model, m)]
        if shot_measures:
            notes.append(f"measures from the cached example {shot.get('question')!r}")
            return shot_measures
    return None


def _refuse_guessed_measure(u: Understanding, ctx: AggregateContext, model: SemanticModel) -> None:
    """A measure the question does not name (a count of a bound table, a retrieved asset) answers only a
    question whose every word binds: "NPS by region" must not become the number of regions."""
    named = (
        any(b.mapped_asset_type in METRIC_ASSET_TYPES for b in ctx.bindings)
        or ctx.few_shots
        or ((match := match_measure(model, u.normalized)) is not None and match.strong)
    )
    if named:
        return
    known = [b.matched or b.canonical_term for b in ctx.bindings] + [d.phrase for d in u.dimensions]
    known += [str(v) for f in ctx.filters for v in f.get("values", [])]
    if unknown := unbound_terms(u, known):
        raise OutOfModelError(
            f"nothing in the model is called {', '.join(repr(w) for w in unknown[:3])}: name one of its measures"
        )


def averaged(measures: list[str], model: SemanticModel, text: str, notes: list[str]) -> list[str]:
    """ "average claim amount": a sum measure becomes its cube's average of the same column; without one
    the question is refused rather than answered with the total."""
    found = [known_member(model, m) for m in measures]
    if not _AVERAGE.search(text) or any(m.type in ("avg", "number") for m in found):
        return measures
    out = []
    for member in found:
        if member.type != "sum" and not member.type.startswith("count"):  # count, count_distinct...
            out.append(member.path)
            continue
        twin = next(iter(same_column_averages(model, member)), None)
        if twin is None:
            raise AggregateError(
                f"the model has no average of {member.title or member.path} ({member.path} is a "
                f"{member.type}): ask for the total, or add an avg measure to the {member.cube} cube"
            )
        notes.append(f"average asked: {member.path} -> {twin}")
        out.append(twin)
    return out
