"""Requests to change data are refused as such: "delete all invoices", "update the price of X to 0", "删除所有发票".

cubesage only reads the warehouse, so such a question must get a refusal that says why, never the rows
or numbers its nouns happen to match. :func:`write_request` recognises, in English and Chinese, an
imperative change verb at the start of the question (after politeness words), change-to phrasing
("set/change/update ... to ..."), the 把/将 ... 改为/删除 construction, and SQL write statements anywhere.
Words that only describe data ("deleted orders", "the change in revenue from 2023 to 2024", "更新时间")
are not requests. The pipeline calls it before any retrieval.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_LEAD = (
    r"^\s*(?:(?:please|pls|kindly|now|then|just|also|go ahead and|can you|could you|would you|will you|"
    r"i want to|i wanna|i'd like to|i would like to|let's|lets|help me|you should|we need to|i need to)"
    r"[\s,]+)*"
)
# an imperative verb that asks for a change whatever follows it
_ALWAYS = (
    r"(delete|remove|drop|truncate|erase|purge|wipe(?: out)?|destroy|insert|alter|grant|revoke|overwrite"
    r"|upsert)\b(?!\s+(?:in|of|off|rate|rates|offs?)\b)"
)
# verbs that ask for a change only with a target value ("set X to 0", "change X into Y", "mark X as Y")
_TO_VALUE = (
    r"(set|change|modify|edit|rename|replace|mark|update)"
    r"(?!\s+(?:in|of|from|between|over|rate|rates|percentage|history|log|logs|trend)\b)"
    r"\s+\S.*?\s(?:to|into|as|=)\s+\S"
)
_UPDATE = r"(update|reset|clear(?: out)?)(?!\s+(?:on|of|for|in|history|log|logs|time|date|frequency)\b)\s+\S"
_CREATE = (
    r"(create|add|insert)\s+(?:a\s+|an\s+|one\s+|new\s+|another\s+)*"
    r"(?:row|record|entry|table|column|index|view|schema|user|role)s?\b"
)
_SQL = (
    r"\b(delete\s+from|insert\s+into|update\s+[\w.\"]+\s+set|drop\s+(?:table|schema|database|view|index|role|user)"
    r"|truncate\s+(?:table\s+)?[\w.\"]+|alter\s+(?:table|role|user|schema|database)|create\s+(?:table|role|user|"
    r"schema|index|view|database)|grant\s+\w+(?:\s*,\s*\w+)*\s+on|merge\s+into|copy\s+[\w.\"]+\s+(?:from|to))\b"
)
_EN = [re.compile(_LEAD + p, re.IGNORECASE) for p in (_ALWAYS, _TO_VALUE, _UPDATE, _CREATE)]
_EN_SQL = re.compile(_SQL, re.IGNORECASE)

_ZH_VERBS = "删除|删掉|删去|删了|清空|清除|移除|插入|新增|添加|创建|新建|修改|更改|更新|改掉|写入|覆盖|重置"
_ZH_LEAD = r"^\s*(?:请|麻烦|帮我|帮忙|给我|你|我要|我想|现在|马上|立即|直接)*\s*"
_ZH = [
    re.compile(_ZH_LEAD + rf"({_ZH_VERBS})(?!的|时间|日期|次数|记录数|频率|情况)"),
    re.compile(
        r"[把将].{1,40}?(删除|删掉|删去|删了|清空|清除|清零|移除|改为|改成|改到|更新为|更新成|修改为|修改成|"
        r"设为|设置为|设成|置为|调整为|调成|替换为|替换成)"
    ),
]


@dataclass(frozen=True)
class WriteRequest:
    """The words of a question that ask for a change."""

    verb: str

    def message(self, language: str) -> str:
        if language == "zh":
            return (
                f"cubesage 只读取数据仓库来回答问题，不会修改任何数据，所以不执行“{self.verb}”这类请求。"
                "可以改问关于这些数据的问题。"
            )
        return (
            f"cubesage only reads the warehouse and never changes data, so a request to "
            f"{self.verb.lower()} is refused. Ask a question about the data instead."
        )


def write_request(question: str) -> WriteRequest | None:
    """The change a question asks for, or None when it only asks about data."""
    text = question.strip()
    sql = _EN_SQL.search(text)
    if sql:
        return WriteRequest(sql.group(1).split()[0].lower())
    for pattern in _EN:
        match = pattern.search(text)
        if match:
            return WriteRequest(match.group(1).lower())
    for pattern in _ZH:
        match = pattern.search(text)
        if match:
            return WriteRequest(match.group(1))
    return None
