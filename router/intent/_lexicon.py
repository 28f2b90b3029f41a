"""Word lists of the fast intent rules (EN and ZH): aggregation, detail, vague and out-of-domain cues."""

from __future__ import annotations

import re

_FLAGS = re.IGNORECASE | re.ASCII  # ASCII: \b must see Chinese characters as boundaries


def _compile(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(patterns), _FLAGS)


AGGREGATION = _compile(
    r"\b(?:total|sum|how many|how much|number of|count|average|avg|mean|median|rate|ratio|percentage|percent|"
    r"share|proportion|trend|growth|grow|grew|increase[ds]?|decrease[ds]?|decline[ds]?|drop(?:ped)?|change[ds]?|"
    r"breakdown|distribution|aggregate|overall|per|top|bottom|highest|lowest|most|least|rank(?:ing)?|"
    r"best[\s-]+selling|top[\s-]+selling|worst[\s-]+selling|bestsellers?|popular|"
    r"(?:more|fewer|less) than \d+ [a-z]+s|at (?:least|most) \d+ [a-z]+s|"
    r"yoy|mom|qoq|year over year|vs|versus|compare[ds]?|comparison|summary|statistics|kpi|metric)\b",
    r"多少|总|合计|一共|总共|平均|均值|占比|比例|比率|率|趋势|走势|排名|排行|前\s*\d+|前[一二三四五六七八九十]+|最高|最多|"
    r"最低|最少|同比|环比|增长|增速|下降|下滑|变化|分布|统计|汇总|几个|几单|几笔|对比|比较|规模|业绩|畅销|最常用|最受欢迎|"
    r"(?:超过|多于|少于|至少)\s*\d+\s*(?:笔|单|次)",
)
METRIC_WORDS = _compile(
    r"\b(?:gmv|revenue|sales|aov|average order value|order count|orders count|refund rate|active customers|"
    r"new customers|units sold|refund amount|payment amount)\b",
    r"销售额|成交额|交易额|成交总额|客单价|订单量|订单数|退款率|活跃客户|新客|营收|收入|销量|退款金额|支付金额",
)
DETAIL = _compile(
    r"\b(?:list|show (?:me )?(?:the |all )?(?:orders|customers|refunds|payments|products|records|rows|details)|"
    r"details?|records?|rows|line items|which orders|what orders|who|whose|when did|what did|bought|purchased|"
    r"contact|email|phone|address|reasons?|status of|order (?:#|no\.?|number )?\d{3,}|each order|all orders|"
    r"(?:which|what) tables?|latest|most recent|info(?:rmation)?)\b",
    r"列出|列一下|明细|详情|详细|清单|哪些订单|记录|有哪些|是谁|买了|购买了|订单号|原因|哪几|具体|逐条|下过哪些|"
    r"哪张表|哪个表|什么表|表结构|字段|信息|最近的订单|所有订单",
)
LIST_VERB = _compile(r"\b(?:list|details?|records)\b", r"列出|列一下|明细|详情|清单")
NAMED = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z0-9][A-Za-z0-9]*)+(?:\s+[a-z]+){0,2}", re.ASCII)
ORDER_ID = re.compile(r"\border\s*(?:#|no\.?|number|id)?\s*\d{3,}\b|订单\s*(?:号|编号)?\s*\d{3,}", _FLAGS)
CLAUSE_JOIN = _compile(
    r"\band (?:show|list|give|tell|display|what|which|who|their|its|the reasons?)\b|,\s*(?:and\s+)?(?:show|list|"
    r"with)\b|\bas well as (?:their|the)\b|\balong with\b|\bplus (?:their|the)\b",
    r"以及|并且|并列出|并给出|并显示|同时列出|同时给出|并说明|及其|和(?:他们|它们|她们)的|和其|,\s*(?:并|列出|显示|以及)|"
    r"[和及](?=(?:其|它们的|他们的)?(?:退款|订单|支付|付款|明细|原因|记录)(?!率|额|金额|量|数|笔数|次数|总额))",
)
VAGUE = _compile(
    r"\bhow (?:are|is|were) (?:we|things|it|business|everything)\b|\bhow'?s (?:business|it going|everything)\b|"
    r"\bshow me (?:the |some |all )?(?:data|numbers|stats|figures|report)\b|"
    r"\bwhat about (?:this|that|it)\b|\bany insights?\b|\bwhat'?s (?:going on|new|up)\b|\bgive me (?:an )?"
    r"(?:overview|update|summary)\b|\bdoing\b|\bperformance\b|\bstatus update\b|\bhow (?:did|do) we do\b",
    r"怎么样|如何了|咋样|情况如何|表现如何|看看数据|给我数据|有什么洞察|整体情况|概况|近况|好不好|"
    r"^(?:这个|那个|这|那|然后)(?:呢|吧|怎么样|如何)?\s*\??$",
)
OFF_DOMAIN = _compile(
    r"\b(?:weather|temperature|forecast|rain(?:ing)?|snow|stock price|share price|stocks?|nasdaq|dow jones|"
    r"bitcoin|crypto|exchange rate|world cup|football|soccer|nba|olympics?|election|president|prime minister|"
    r"recipe|movie|film|song|joke|poem|translate|capital of|population of|news|horoscope|who won|lottery|"
    r"meaning of life|celebrity|employees?|salar(?:y|ies)|payroll|essay)\b",
    r"天气|气温|下雨|下雪|股价|股票|比特币|汇率|世界杯|足球|篮球|奥运|选举|总统|总理|食谱|菜谱|电影|歌曲|笑话|写诗|翻译|"
    r"首都|人口|新闻|星座|彩票|谁赢了|冠军是谁|员工|工资|薪资|薪水|一首|作文",
)
DOMAIN = _compile(
    r"\b(?:orders?|customers?|products?|refunds?|payments?|sales|gmv|revenue|regions?|channels?|categor(?:y|ies)|"
    r"brands?|items?|segments?|aov|warehouse|tables?|shop|business|store)\b",
    r"订单|客户|顾客|产品|商品|退款|支付|付款|销售|成交|地区|区域|渠道|品类|类目|品牌|门店|用户|会员|营收|收入|业务",
)

