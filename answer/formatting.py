"""Number and label formatting shared by the answer text and its tests: one format per number."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from typing import Any

LABELS_EN = {"gmv": "GMV", "aov": "AOV", "count": "order count", "refund_rate": "refund rate",
             "active_customers": "active customers", "new_customers": "new customers", "revenue": "revenue",
             "name_en": "region", "name_zh": "region", "customer_name": "customer", "product_name": "product"}
LABELS_ZH = {"gmv": "GMV", "aov": "客单价", "count": "订单量", "refund_rate": "退款率",
             "active_customers": "活跃客户数", "new_customers": "新客数", "revenue": "销售额", "amount": "金额",
             "name_en": "地区", "name_zh": "地区", "customer_name": "客户", "product_name": "商品",
             "channel": "渠道", "category": "品类", "segment": "客户分层", "reason": "原因", "method": "支付方式",
             "status": "状态"}
# a number token as written; digits inside names ("Pulse T6", "X1") are not numbers
NUMBER = re.compile(r"(?<![A-Za-z0-9.,])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![A-Za-z0-9])")


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


def label(column: str, language: str) -> str:
    """A readable name for a result column ("order_items.gmv" -> "GMV", "orders.order_ts.month" -> "month")."""
    parts = column.split(".")
    key = parts[-1]
    if len(parts) >= 3 and key in ("day", "week", "month", "quarter", "year"):
        return {"day": "日", "week": "周", "month": "月份", "quarter": "季度", "year": "年"}[key] \
            if language == "zh" else key
    table = LABELS_ZH if language == "zh" else LABELS_EN
    return table.get(key, key.replace("_", " "))


def numbers_in(text: str) -> list[str]:
    """Number tokens of ``text`` as written (with separators)."""
    return NUMBER.findall(text)
