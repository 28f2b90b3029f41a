"""The sentence that states a tie at an aggregate's limit (``router.aggregate.ties``), in EN or ZH.

"2 rows tie at Orders 13 across the limit of 1: 1 of them is shown (Ann)." A mixed answer adds that its
detail rows are those of the rows shown. The tied rows shown are named by the query's first dimension.
"""

from __future__ import annotations

from typing import Any

from answer.formatting import fmt_value, label
from router.aggregate.ties import Tie


def _shown_names(tie: Tie, rows: list[dict[str, Any]], dimensions: list[str]) -> str:
    if not dimensions:
        return ""
    tied = [r for r in rows if all(str(r.get(m)) == str(v) for m, v in zip(tie.members, tie.values, strict=True))]
    return ", ".join(fmt_value(r.get(dimensions[0])) for r in tied)


def _at(tie: Tie, lang: str) -> str:
    sep = "、" if lang == "zh" else ", "
    return sep.join(f"{label(m, lang)} {fmt_value(v)}" for m, v in zip(tie.members, tie.values, strict=True))


def tie_text(tie: Tie, rows: list[dict[str, Any]], query: dict[str, Any], *, lang: str, mixed: bool) -> str:
    """The tie, how many rows it has and which of them are shown; "" when there is none."""
    names = _shown_names(tie, rows, list(query.get("dimensions") or []))
    at, shown, limit = _at(tie, lang), fmt_value(tie.shown), fmt_value(tie.limit)
    if lang == "zh":
        count = f"共有 {fmt_value(tie.tied)} 行" if tie.tied is not None else f"不止 {shown} 行"
        text = (
            f" {count}在{at} 处并列，超出上限 {limit} 行：显示其中 {shown} 行"
            + (f"（{names}）" if names else "")
            + "。"
        )
        return text + (" 明细为所显示行的明细。" if mixed else "")
    count = f"{fmt_value(tie.tied)} rows tie" if tie.tied is not None else f"More than {shown} rows tie"
    verb = "is" if tie.shown == 1 else "are"
    text = f" {count} at {at} across the limit of {limit}: {shown} of them {verb} shown" + (
        f" ({names})" if names else ""
    )
    return text + "." + (" The detail rows are those of the rows shown." if mixed else "")
