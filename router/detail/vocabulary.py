"""Words that name warehouse tables and low-cardinality column values, in English and Chinese.

The warehouse contract (WAREHOUSE.md) fixes these value sets; detail questions filter on them
("refunded orders", "VIP客户", "支付宝付款").
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class ValueWord:
    table: str
    column: str
    value: str
    pattern: re.Pattern[str]


def _w(table: str, column: str, value: str, pattern: str) -> ValueWord:
    return ValueWord(table, column, value, re.compile(pattern, re.IGNORECASE | re.ASCII))


# order matters: first match per (table, column) wins
VALUE_WORDS: tuple[ValueWord, ...] = (
    _w("fact_order", "status", "refunded", r"\brefunded\b|已退款|退款的订单|被退款"),
    _w("fact_order", "status", "cancelled", r"\bcancel+ed\b|已取消|取消的"),
    _w("fact_order", "status", "pending", r"\bpending\b|待处理|未完成"),
    _w("fact_order", "status", "completed", r"\bcompleted\b|已完成|完成的订单"),
    _w("fact_order", "channel", "web", r"\bweb\b|网站|网页|官网"),
    _w("fact_order", "channel", "app", r"\bapp\b|移动端|手机端|APP"),
    _w("fact_order", "channel", "store", r"\bstores?\b|门店|线下"),
    _w("dim_customer", "segment", "vip", r"\bvip\b"),
    _w("dim_customer", "segment", "corporate", r"\bcorporate\b|企业客户|公司客户"),
    _w("dim_customer", "segment", "consumer", r"\bconsumers?\b|个人客户|普通客户"),
    _w("fact_refund", "reason", "damaged", r"\bdamaged\b|损坏|破损"),
    _w("fact_refund", "reason", "late_delivery", r"\blate[ _]delivery\b|\blate\b|延迟|晚到|配送慢"),
    _w("fact_refund", "reason", "wrong_item", r"\bwrong[ _]item\b|发错|错发"),
    _w("fact_refund", "reason", "changed_mind", r"\bchanged[ _]mind\b|不想要|改变主意"),
    _w("fact_payment", "method", "alipay", r"\balipay\b|支付宝"),
    _w("fact_payment", "method", "wechat", r"\bwechat\b|微信"),
    _w("fact_payment", "method", "card", r"\bcards?\b|银行卡|刷卡"),
    _w("fact_payment", "method", "cash", r"\bcash\b|现金"),
    _w("dim_product", "category", "electronics", r"\belectronics?\b|电子"),
    _w("dim_product", "category", "home", r"\bhome\b|家居"),
    _w("dim_product", "category", "apparel", r"\bapparel\b|服装|服饰"),
    _w("dim_product", "category", "beauty", r"\bbeauty\b|美妆|美容"),
    _w("dim_product", "category", "grocery", r"\bgrocery\b|食品|杂货"),
    _w("dim_product", "category", "sports", r"\bsports?\b|运动"),
)

# the table a detail question lists, by its head noun; the first pattern that matches wins
TARGET_WORDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("fact_refund", re.compile(r"\brefunds\b|refund (reasons?|amounts?|records?)|退款(原因|记录|金额|明细|单)",
                               re.I | re.A)),
    ("fact_payment", re.compile(r"\bpayments?\b|支付记录|付款记录|支付明细|付款明细", re.I | re.A)),
    ("fact_order_item", re.compile(r"order (items?|lines?)|line items?|订单明细|购买的商品|买了(什么|哪些)",
                                   re.I | re.A)),
    ("fact_order", re.compile(r"\borders?\b|订单|下单", re.I | re.A)),
    ("fact_refund", re.compile(r"\brefund\b|退款", re.I | re.A)),
    ("dim_customer", re.compile(r"\bcustomers?\b|客户|顾客|用户", re.I | re.A)),
    ("dim_product", re.compile(r"\bproducts?\b|商品|产品", re.I | re.A)),
    ("dim_region", re.compile(r"\bregions?\b|地区|区域|大区", re.I | re.A)),
)

TABLE_LOOKUP = re.compile(
    r"\b(which|what) tables?\b|\bwhere (is|are|can i find)\b.*\b(stored|kept)\b|哪(个|张|些)表|什么表|存在哪",
    re.I | re.A)

# "the employee_salaries table", "table hr.salaries", "salary_records表": a table named by identifier
NAMED_TABLE = re.compile(r"\btable\s+([A-Za-z_][\w.]*_[\w.]*)|([A-Za-z_][\w.]*_[\w.]*)\s*(?:table\b|表)", re.I | re.A)
KNOWN_TABLES = frozenset({"fact_order", "fact_order_item", "fact_payment", "fact_refund", "dim_customer",
                          "dim_product", "dim_region", "order_items"})

DETAILS_OF = re.compile(r"\bdetails?\b|\bprofile\b|\binfo(rmation)?\b|详情|信息|资料", re.I | re.A)


def value_filters(text: str) -> list[ValueWord]:
    """Column-value filters named in ``text`` (one per table column)."""
    seen: set[tuple[str, str]] = set()
    out: list[ValueWord] = []
    for word in VALUE_WORDS:
        key = (word.table, word.column)
        if key not in seen and word.pattern.search(text):
            seen.add(key)
            out.append(word)
    return out


def target_table(text: str) -> str | None:
    """The table whose rows the question lists, from its head noun (None when no noun names one)."""
    for table, pattern in TARGET_WORDS:
        if pattern.search(text):
            return table
    return None

_NUM_WORDS = {"one": 1, "two": 2, "three": 3, "five": 5, "ten": 10, "一": 1, "两": 2, "二": 2, "三": 3, "五": 5,
              "十": 10}
ROW_LIMIT = re.compile(
    r"\b(?:latest|last|most recent|recent|first|newest|top)\s+(\d+|one|two|three|five|ten)\b"
    r"|最近\s*(\d+|[一两二三五十])\s*(?:笔|条|个|单|次)|前\s*(\d+)\s*(?:笔|条|单)", re.I | re.A)


def row_limit(text: str) -> int | None:
    """"the latest 5 orders" / "最近5笔订单" -> 5."""
    m = ROW_LIMIT.search(text)
    if m is None:
        return None
    token = next(g for g in m.groups() if g)
    return int(token) if token.isdigit() else _NUM_WORDS[token.lower()]


def unknown_table(text: str) -> str | None:
    """A table the question names by identifier that the warehouse does not have."""
    for m in NAMED_TABLE.finditer(text):
        name = (m.group(1) or m.group(2)).lower().rsplit(".", 1)[-1]
        if name not in KNOWN_TABLES:
            return name
    return None
