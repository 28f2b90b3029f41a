"""Number and label formatting shared by the answer text and its tests: one format per number."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from typing import Any

from answer.vocabulary import vocabulary
from fourengine.terms import singular

# a number token as written, with its percent sign; digits inside names ("Pulse T6", "X1") are not numbers
NUMBER = re.compile(r"(?<![A-Za-z0-9.,])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?%?(?![A-Za-z0-9])")
# dates and period labels of a text ("2024-01-01", "2024-03", "2024-Q1", "2024年3月", "2024年Q1", "2024年")
PERIOD_TOKEN = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[ T][\d:.]+)?|\d{4}-\d{2}|\d{4}-[QW]\d{1,2}|"
    r"\d{4}年(?:\d{1,2}月|Q\d|第\d{1,2}周|\d季度)?|Q\d(?:\s+\d{4})?"
)
GRAINS = ("day", "week", "month", "quarter", "year")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")


def is_number(value: Any) -> bool:
    return isinstance(value, int | float | Decimal) and not isinstance(value, bool)


def fmt_number(value: Any) -> str:
    """Integers with thousands separators; |x| >= 100 with 2 decimals; smaller values with 4 significant."""
    v = float(value)
    if v.is_integer() and abs(v) < 1e15:
        return f"{int(v):,}"
    if abs(v) >= 100:
        return f"{v:,.2f}"
    return f"{v:.4g}"


def fmt_percent(value: Any) -> str:
    """A ratio as a percent with 2 decimals (0.06636 -> "6.64%")."""
    return f"{float(value) * 100:,.2f}%"


def fmt_change(ratio: Any) -> str:
    """A relative change with its sign (2.0029 -> "+200.29%", -0.05 -> "-5.00%")."""
    return f"{float(ratio) * 100:+,.2f}%"


def fmt_currency(value: Any) -> str:
    """An amount with thousands separators and 2 decimals (2325981.6 -> "2,325,981.60")."""
    return f"{float(value):,.2f}"


def fmt_measure(value: Any, fmt: str | None) -> str:
    """A number in the format its Cube member declares (``percent``, ``currency``), else ``fmt_number``;
    not a number: ``fmt_value``."""
    if not is_number(value):
        return fmt_value(value)
    if fmt == "percent":
        return fmt_percent(value)
    return fmt_currency(value) if fmt == "currency" else fmt_number(value)


def fmt_period(value: Any, grain: str | None, language: str) -> str:
    """A time value by its granularity: month "2024-01" / "2024年1月", quarter "2024-Q1" / "2024年Q1",
    week (ISO) "2024-W05" / "2024年第5周", year "2024" / "2024年", day the date; other values as ``fmt_value``."""
    text = fmt_value(value)
    m = re.match(r"(\d{4})-(\d{2})-(\d{2})", text)
    if m is None or grain not in GRAINS:
        return text
    year, month = m.group(1), int(m.group(2))
    if grain == "month":
        return f"{year}年{month}月" if language == "zh" else f"{year}-{month:02d}"
    if grain == "quarter":
        return f"{year}年Q{(month - 1) // 3 + 1}" if language == "zh" else f"{year}-Q{(month - 1) // 3 + 1}"
    if grain == "year":
        return f"{year}年" if language == "zh" else year
    if grain == "week":
        iso_year, week, _ = dt.date(int(year), month, int(m.group(3))).isocalendar()
        return f"{iso_year}年第{week}周" if language == "zh" else f"{iso_year}-W{week:02d}"
    return m.group(0)


def grain_of(column: str) -> str | None:
    """The granularity of a time-dimension column ("invoices.issued_at.month" -> "month")."""
    parts = column.split(".")
    return parts[-1] if len(parts) >= 3 and parts[-1] in GRAINS else None


def fmt_value(value: Any) -> str:
    if is_number(value):
        return fmt_number(value)
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}T00:00:00(\.000)?", value):
        return value[:10]
    return str(value)


GRAIN_WORDS_ZH = {"day": "日", "week": "周", "month": "月", "quarter": "季度", "year": "年"}


SHOWN_UNITS = {"hours": "小时", "minutes": "分钟", "seconds": "秒", "days": "天"}


def label(column: str, language: str) -> str:
    """A readable name for a result column: the detail vocabulary's label of its last part, else the glossary's
    or the model's name of the member ("loans.fee_sum" -> "Total fee"); a time dimension by granularity names its
    member and grain ("invoices.issued_at.month" -> "issue date (month)", "开票时间（月）")."""
    parts = column.split(".")
    key = parts[-1]
    if len(parts) >= 3 and key == "share":  # a derived share of the total ("loans.fee_sum.share")
        of = label(".".join(parts[:-1]), language)
        return f"{of}占比" if language == "zh" else f"share of {of}"
    if len(parts) >= 4 and parts[-2] == "per":  # "tracks.count.per.albums": a measure per row of a cube
        of, each = label(".".join(parts[:-2]), language), parts[-1].replace("_", " ")
        if language == "zh":  # the cube by its row count's Chinese name ("读者数" -> 读者), else its name
            counted = vocabulary().member_label(f"{parts[-1]}.count", "zh") or each
            return f"每{re.sub(r'(?:数量|总数|个数|数)$', '', counted)}平均{of}"
        return f"{of} per {singular(each)}"
    if len(parts) >= 3 and key in SHOWN_UNITS:  # a measure converted to the unit asked ("....longest_ms.minutes")
        of = re.sub(r"\s*[(（][^)）]*[)）]\s*$", "", label(".".join(parts[:-1]), language))
        return f"{of}（{SHOWN_UNITS[key]}）" if language == "zh" else f"{of} ({key})"
    if len(parts) >= 3 and key in GRAINS:
        base = ".".join(parts[:-1])
        named = vocabulary().member_label(base, language)
        if language == "zh":
            word = GRAIN_WORDS_ZH[key]
            return f"{named}（{word}）" if named else {"month": "月份"}.get(key, word)
        return f"{named} ({key})" if named else key
    vocab = vocabulary()
    named = vocab.column_label(key, language) or vocab.member_label(column, language)
    return named or vocab.member_label(column, "en") or key.replace("_", " ")  # the model's title, else the name


def numbers_in(text: str) -> list[str]:
    """Number tokens of ``text`` as written (with separators and a trailing percent sign)."""
    return NUMBER.findall(text)


def table_numbers(columns: list[str], rows: list[list[Any]], formats: list[str | None] | None = None) -> set[str]:
    """Every way the text may write a number of the table: ``fmt_number`` of each number, ``fmt_measure`` of
    the numbers of percent and currency columns, a key as written (``id`` columns: "order 96647"), the year of
    a period or date ("2021" of "2021-01-01T00:00:00.000": a yearly trend names its years), and the row count."""
    formats = formats or [None] * len(columns)
    allowed = {fmt_number(len(rows))}
    for row in rows:
        for v, fmt in zip(row, formats, strict=False):
            if isinstance(v, str) and _ISO_DATE.match(v):
                allowed.add(v[:4])
            if is_number(v):
                allowed.add(fmt_number(v))
                allowed.add(fmt_measure(v, fmt))
                if fmt == "id" and float(v).is_integer():
                    allowed.add(str(int(v)))
    return allowed


def change_numbers(changes: list[dict[str, Any]] | None) -> set[str]:
    """How the text writes the changes of compared periods (provenance ``changes``) as number tokens."""
    return {fmt_change(c["change_pct"]).lstrip("+") for c in changes or [] if c.get("change_pct") is not None}


def cut_numbers(truncation: list[dict[str, Any]] | None) -> set[str]:
    """How the text writes the limits an answer's rows stopped at (provenance ``truncation``: shown N of M)."""
    return {fmt_number(c[key]) for c in truncation or [] for key in ("shown", "total") if c.get(key) is not None}


def filter_numbers(queries: list[dict[str, Any] | None]) -> set[str]:
    """How the text writes the numbers of the filters the answer applied ("under 500"): declared, not made up."""
    values = [v for q in queries for f in (q or {}).get("filters") or [] for v in f.get("values") or []]
    return {fmt_number(float(v)) for v in values if is_number(v) or _PLAIN_NUMBER.fullmatch(str(v))}


_PLAIN_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")  # a filter value that is a number written as text ("3000")


def fmt_bound(value: Any) -> str:
    """A filter's number as the answer writes numbers ("3000" -> "3,000"), other values as they are."""
    return fmt_number(float(value)) if _PLAIN_NUMBER.fullmatch(str(value)) else str(value)


def question_numbers(question: str) -> set[str]:
    """How the text writes the numbers the question itself wrote ("order 7", "top 59"): quoted, not made up."""
    return {fmt_number(float(n.replace(",", ""))) for n in re.findall(r"\d[\d,]*(?:\.\d+)?", question)}


def stray_numbers(text: str, allowed: set[str], labels: tuple[str, ...] = ()) -> list[str]:
    """Number tokens of ``text`` that are not in ``allowed``, after taking out dates, period tokens and the
    given ``labels`` (e.g. the question's time-range phrases); where they overlap the longest one goes."""
    spans = [m.span() for m in PERIOD_TOKEN.finditer(text)]
    spans += [m.span() for name in labels if name for m in re.finditer(re.escape(name), text)]
    kept, end = [], 0
    for start, stop in sorted(spans, key=lambda s: (s[0], -s[1])):
        if start >= end:
            kept.append(text[end:start])
            end = stop
        elif stop > end:  # overlapping: extend the current cut
            end = stop
    kept.append(text[end:])
    return [t for t in numbers_in(" ".join(kept)) if t not in allowed]
