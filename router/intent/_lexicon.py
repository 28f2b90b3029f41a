"""Word lists of the fast intent rules (EN and ZH): aggregation, detail, listing, key and vague cues.

Language only: the nouns of a warehouse (its tables, metrics, values) come from the model through the
bindings the pipeline passes in ``IntentSignals``; patterns such as ``ROWS_LEAD`` and ``KEY_AFTER`` are
read around the words that bound a table.
"""

from __future__ import annotations

import re

_FLAGS = re.IGNORECASE | re.ASCII  # ASCII: \b must see Chinese characters as boundaries


def _compile(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(patterns), _FLAGS)


AGGREGATION = _compile(
    r"\b(?:total|sum|how many|how much|number of|count|average|avg|mean|median|rate|ratio|percentage|percent|"
    r"share|proportion|trend|growth|grow|grew|increase[ds]?|decrease[ds]?|decline[ds]?|drop(?:ped)?|change[ds]?|"
    r"breakdown|distribution|aggregate|overall|per|top|bottom|highest|lowest|most|least|rank(?:ing)?|"
    r"biggest|largest|longest|shortest|smallest|greatest|maximum|minimum|max|min|"
    r"best[\s-]+selling|top[\s-]+selling|worst[\s-]+selling|bestsellers?|popular|"
    r"(?:more|fewer|less) than \d+ [a-z]+s|at (?:least|most) \d+ [a-z]+s|"
    r"yoy|mom|qoq|year over year|vs|versus|compare[ds]?|comparison|summary|statistics|kpi|metric)\b",
    r"多少|总|合计|一共|总共|平均|均值|占比|比例|比率|率|趋势|走势|排名|排行|前\s*\d+|前[一二三四五六七八九十]+|最高|最多|"
    r"最低|最少|同比|环比|增长|增速|下降|下滑|变化|分布|统计|汇总|几个|几单|几笔|对比|比较|规模|业绩|畅销|最常用|最受欢迎|"
    r"(?:超过|多于|少于|至少)\s*\d+\s*(?:笔|单|次)",
)
DETAIL = _compile(
    r"\b(?:list|details?|records?|rows|line items|who|whose|when did|what did|bought|purchased|"
    r"contact|email|phone|address|reasons?|status of|(?:which|what) tables?|latest|most recent|info(?:rmation)?)\b",
    r"列出|列一下|明细|详情|详细|清单|记录|有哪些|是谁|买了|购买了|原因|哪几|具体|逐条|下过哪些|"
    r"哪张表|哪个表|什么表|表结构|字段|信息",
)
# words before a table's noun that ask for its rows: "show me the invoices", "which albums", "所有曲目"
ROWS_LEAD = _compile(
    r"\b(?:show|display|give|get|find|pull|fetch|see|view|all)(?:\s+me)?"
    r"(?:\s+(?:the|all|every|each|any|of\s+the))?\s+(?:[a-z]+\s+)?$",
    r"(?:哪些|哪几个|哪个|所有|全部|最近的|显示|查看|看看)(?:的)?$",
)
# after a table's noun: a key ("invoice 412", "ticket #8579", "发票号8579")
KEY_AFTER = _compile(r"^\s*(?:#|no\.?|number|id)?\s*#?\d{2,}\b", r"^\s*(?:号|编号|id)?\s*\d{2,}")
LIST_VERB = _compile(r"\b(?:list|details?|records)\b", r"列出|列一下|明细|详情|清单")
NAMED = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z0-9][A-Za-z0-9]*)+(?:\s+[a-z]+){0,2}", re.ASCII)
CLAUSE_JOIN = _compile(
    r"\band (?:(?:can|could|would|will) you (?:also |please )?|also |then |please )?"
    r"(?:show|list|give|tell|display|pull|what|which|who|their|its|the reasons?)\b|"
    r",\s*(?:and\s+)?(?:(?:can|could|would) you (?:also )?)?(?:show|list|"
    r"with)\b|\bas well as (?:their|the)\b|\balong with\b|(?:\bplus|\s[+&]) (?:their|the|its)\b|"
    r",?\s*\band (?:the|all the)\b(?=[^?.!]*\b(?:behind|under(?:lying|neath)|ma(?:d|k|king)e? (?:it|them|that) up)\b)",
    r"以及|并且|并列出|并给出|并显示|同时列出|同时给出|并说明|及其|和(?:他们|它们|她们)的|和其|,\s*(?:并|列出|显示|以及)|"
    r"[和及](?=(?:其|它们的|他们的)|\S{0,8}(?:明细|原因|记录|清单|列表))|顺便|[?？。；;](?=\s*\S)",
)
# the joining words a clause about rows starts with ("plus the orders that bought it")
LEADING_JOIN = _compile(r"^(?:\s*(?:and|also|then|plus|as well as|along with|,|以及|并且|并|同时|和)\s*)+")
# a clause after an aggregate one that asks for the rows behind it ("which ones were they", "which orders
# make it up", "把名单列一下"): a which/who question with no aggregation word, or these phrases
TAIL_ROWS = _compile(
    r"\b(?:which|what|who) (?:ones|are they|were they|are those|were those)\b|\bmake (?:it|them|that) up\b|"
    r"\b(?:behind|underlying) (?:it|that|this|them|those|these|the (?:number|total|figure|sum))\b|"
    r"\b(?:show|list|give)(?: me)? (?:them|those|these|each)\b|"
    r"\b(?:show|list|give)(?: me)? (?:the |all (?:of )?the )?(?:individual|underlying|separate|single|actual)\b",
    r"列出|列一下|名单|是哪些|有哪些|哪几|是哪一?[单个笔条张位家款首]",
)
# a number ranking the rows of the noun after it ("its 10 largest orders", "the 5 most delayed flights", "最大的10笔")
RANKED_ROWS = _compile(
    r"\b\d+\s+(?:largest|biggest|smallest|highest|lowest|longest|shortest|latest|newest|oldest|earliest|"
    r"most recent|most|least|top|bottom|best|worst|cheapest|most expensive)(?:\s+[a-z-]+){0,2}\s+$",
    r"最[大小高低长短新早贵]的?\s*\d+\s*[笔条个张首单次]?\s*$",
)
ROW_QUESTION = _compile(r"^\W*(?:and\s+)?(?:which|who|what)\b", r"^\W*(?:是)?哪些")
VAGUE = _compile(
    r"\bhow (?:are|is|were) (?:we|things|it|business|everything)\b|\bhow'?s (?:business|it going|everything)\b|"
    r"\bhow(?:'s| (?:are|is|were)) (?:the |our )?[a-z]+ (?:looking|going|doing|trending|holding up)\b|"
    r"\b(?:show|pull|give|get|send)(?: me| us)? (?:the |some |all |our )?(?:[a-z]+ )?(?:data|numbers|stats|figures|"
    r"report)(?: for (?:me|us|the [a-z]+))?\s*[?.!]*$|"
    r"\bshow me (?:the |some |all )?(?:data|numbers|stats|figures|report)\b|"
    r"\bwhat about (?:this|that|it)\b|\bany insights?\b|\bwhat'?s (?:going on|new|up)\b|\bgive me (?:an )?"
    r"(?:overview|update|summary)\b|\bdoing\b|\bperformance\b|\bstatus update\b|\bhow (?:did|do) we do\b",
    r"怎么样|如何了|咋样|情况如何|表现如何|看看数据|给我数据|有什么洞察|整体情况|概况|近况|好不好|"
    r"^(?:这个|那个|这|那|然后)(?:呢|吧|怎么样|如何)?\s*\??$",
)
# words that ask about the warehouse itself, whatever its model ("which table", "数据")
GENERIC_DOMAIN = _compile(r"\b(?:tables?|data(?:base)?|warehouse|records?|rows?)\b", r"表|数据|记录")
# words of asking and trading that name nothing in a warehouse: not evidence, and not unknown either
PLAIN_VERBS = _compile(
    r"\b(?:buy|buys|bought|purchase[ds]?|spend|spends|spent|pay|pays|paid|sell|sells|sold|make|made|place[ds]?|"
    r"get|got|have|has|had|do|does|did|tell|give|show|see|want|need|know|look|find|much|many|each|per|total|"
    r"going|doing|happening|up|new|numbers?|figures?|stats?|report|used?|common|popular|frequent|usual|"
    r"more|less|fewer|over|under|above|below|least|most|than|exceed(?:s|ing)?|currently|ever|overall)\b",
    r"买|购买|花|花了|消费|支付|付|卖|卖了|下单|是|有|多少|一共|总共|请|帮我|看|查|告诉|常用|常见|最常|"
    r"超过|至少|多于|少于|大于|小于|以上|以下|不少于|不超过|目前|现在|一下",
)
