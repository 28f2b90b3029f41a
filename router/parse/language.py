"""Language words of questions, English and Chinese: aggregation, grouping, listing, ordering, comparing,
bounding. No warehouse nouns live here: every noun comes from the model (``router.parse.lexicon``).

``marks(text)`` returns every language span as a :class:`~router.parse.reading.Mark`:

| kind | examples | data |
|---|---|---|
| count | how many, number of, count, 多少, 几个, 数量 | |
| distinct | distinct, different, unique, 不同 | |
| avg / sum / max / min / median | average, total, highest, lowest, median, 平均, 总, 最高, 最低, 中位数 | |
| share | share, percentage, proportion, 占比, 比例 | |
| group | by, per, for each, each, across, breakdown, mix, 按, 各, 每个 | |
| which | which, what, who, 哪个, 哪些, 谁 | "one" or "many" |
| list | list, show, give me, display, 列出, 显示, 有哪些 | |
| bound | more than 9,000, at least 5, 超过38万, 5000以上, between 1 and 5 | (operator, [numbers]) |
| sign | negative, positive, 为负, 负数 | (operator, "0") |
| order | highest first, cheapest first, descending, high to low, 从高到低, 降序 | "desc" / "asc" |
| recent | the latest 5, 3 most recent, 最近5笔 | (direction, N) on the listed cube's time |
| negation | never, not, without, don't, 从未, 没有 | |
| string_op | starting with X, containing X, 以X开头, 包含X | (operator, value) |
| string_in | with 'X' in the name, have X in the title | ("contains", value, the column's words) |
| write | delete, update, insert, drop, 删除, 修改 | |
"""

from __future__ import annotations

import re
from functools import lru_cache

from router.parse.reading import Mark
from router.parse.text import norm_word
from router.understanding._calendar import parse_number
from router.understanding.ranking import ZH_CLASSIFIERS

_F = re.IGNORECASE
# an amount: "9,000", "$15", "1.5k", "38万", "2 million", "5000元"
NUMBER = (
    r"(?:[$¥€£]\s*)?((?:(?<![\w-])[-−])?\d+(?:,\d{3})*(?:\.\d+)?|\.\d+)"
    r"\s*((?:k|m|bn|thousand|million|billion)(?![a-z])|万|千|百万|亿)?"
    r"(?:\s*(?:元|块|美元|dollars?|usd|rmb|yuan))?"
)
_NUMBER_RE = re.compile(NUMBER, _F)
_SCALE = {
    "k": 1e3,
    "thousand": 1e3,
    "m": 1e6,
    "million": 1e6,
    "bn": 1e9,
    "billion": 1e9,
    "万": 1e4,
    "千": 1e3,
    "百万": 1e6,
    "亿": 1e8,
}

_GT = (
    r"more than|greater than|higher than|larger than|bigger than|longer than|later than|heavier than|faster than|"
    r"older than|more expensive than|over|above|exceeding|exceeds?|in excess of|>"
)
_GTE = r"at least|no less than|not less than|minimum of|>=|≥"
_LT = (
    r"less than|fewer than|lower than|smaller than|shorter than|earlier than|lighter than|slower than|"
    r"cheaper than|younger than|under|below|<"
)
_LTE = r"at most|no more than|not more than|up to|maximum of|<=|≤"
_EQ = r"equal to|equals|exactly|="
_ZH_BEFORE = {
    "超过": "gt",
    "大于": "gt",
    "高于": "gt",
    "多于": "gt",
    "超出": "gt",
    "不少于": "gte",
    "至少": "gte",
    "不低于": "gte",
    "低于": "lt",
    "小于": "lt",
    "少于": "lt",
    "不到": "lt",
    "不足": "lt",
    "不超过": "lte",
    "至多": "lte",
    "最多": "lte",
    "等于": "equals",
}
_ZH_AFTER = {"以上": "gt", "以下": "lt", "以内": "lte", "及以上": "gte", "及以下": "lte"}

# "按薪水从高到低排列": 按 before a direction orders the rows, it groups nothing ("按日期排序" is left to the
# order pass, which reads the group word and 排序 together)
_ZH_ORDERED = r"[^，。？！,?!]{0,12}?(?:[从由][高低大小多少新旧近远]到|降序|升序|倒序)"
_PATTERNS: tuple[tuple[str, str], ...] = (
    (
        "count",
        r"\bhow many\b|\bnumber of\b|\bno\. of\b|\bcount(?:s|ed)?\b|#\s*of\b|"
        rf"多少|几[{ZH_CLASSIFIERS}笔单次]|数量|个数|数目|总数|计数",
    ),
    ("distinct", r"\bdistinct\b|\bdifferent\b|\bunique\b|不同的?|去重|多少种|几种"),
    ("avg", r"\baverage\b|\bavg\b|\bmean\b|\btypical\b|\bon average\b|平均|均值|人均|均价"),
    (
        "sum",
        r"\bhow much\b|\badd(?:s|ed)? up(?: to)?\b|\bamount(?:s|ed)? to\b|\bcome to\b|\bcame to\b|\btotal\b|"
        r"\bsum(?: of)?\b|\baltogether\b|\bcombined\b|\bin all\b|总(?!数)|合计|总计|一共|共计|累计",
    ),
    (
        "max",
        r"\bmax(?:imum)?\b|\bhighest\b|\blargest\b|\bbiggest\b|\blongest\b|\bgreatest\b|\bpeak\b|"
        r"\bmost expensive\b|\bpriciest\b|\bcostliest\b|\bheaviest\b|\blatest\b|\bnewest\b|\bmost recent\b|\bfastest\b|"
        r"最高|最大|最长|最贵|最重|最晚|最新|最近",
    ),
    (
        "min",
        r"\bmin(?:imum)?\b|\blowest\b|\bsmallest\b|\bshortest\b|\bcheapest\b|\bleast expensive\b|"
        r"\blightest\b|\bearliest\b|\boldest\b|\bslowest\b|\bfirst\b(?= (?:ever|one))|"
        r"最低|最小|最短|最便宜|最轻|最早|最旧",
    ),
    ("most", r"(?<!at )\bmost\b|\bfewest\b|(?<!at )\bleast\b|\bbusiest\b|\bquietest\b|最多|最少|最繁忙|最忙"),
    ("top", r"\btop\b|\bbest\b|\bworst\b|\bbottom\b|最好|最差|最"),
    ("median", r"\bmedian\b|\bpercentile\b|\bp\d{2}\b|\bquartile\b|中位数|分位"),
    (
        "share",
        r"\bshare\b|\bpercentage\b|\bpercent\b|\bproportion\b|\bfraction\b|%\s*of\b|\bratio\b|"
        r"占比|比例|比重|份额|百分比|占多少|百分之(?:多少|几)|占(?=[^，。？,?]{0,30}百分之)",
    ),
    (
        "group",
        r"\bby\b|\bper\b|\bfor each\b|\bfor every\b|\beach\b|(?<!across )\bevery\b|"
        r"\bacross\b(?! all\b| every\b)|\bbroken down\b|"
        rf"\bbreakdown\b|\bmix\b|\bsplit\b|\bgrouped\b|按(?:照)?(?!{_ZH_ORDERED})|各(?!自)|每(?:个|一|位|家|种)?|分别",
    ),
    (
        "which",
        r"\bwhat are\b|\bwhich are\b|\bwho are\b|\bwhich\b|\bwhat\b|\bwho\b|\bwhose\b|"
        r"哪(?:个|些|一|家|位|款|种|几|里|国)?|谁|什么",
    ),
    (
        "list",
        r"\blist(?:ing)?\b|\bshow(?: me)?\b|\bdisplay\b|\bgive me\b|\bget me\b|\bfind\b|\bpull(?: up)?\b|"
        r"\bfetch\b|\benumerate\b|\breturn\b|\bnames? of\b|\bdetails?\b|(?<!on )\brecords?\b|"
        r"列出|列一下|列举|显示|给我|查一下|拉(?:一下|一份|个|出来)|查询|有哪些|是哪些|明细|清单|名单|列表|详情|都有谁|找出|找一下|查出",
    ),
    (
        "negation",
        r"\bnever\b|\bnot\b|\bwithout\b|\bno\b(?!\.)|\bnone\b|\bnon\b(?=[- ]\w)|\bdon'?t\b|\bdoesn'?t\b|\bdidn'?t\b|"
        r"\bhaven'?t\b|\bhasn'?t\b|\bwasn'?t\b|\bweren'?t\b|\baren'?t\b|\bisn'?t\b|\bnor\b|"
        r"从未|从没|从来没|没有|未曾|不曾|没|未(?!来)|无(?!论)",
    ),
    (
        "change",
        r"\bgrowth\b|\bgrow(?:s|n|ing)?\b|\bgrew\b|\bincreased?\b|\bdecreased?\b|\bchanged?\b|"
        r"\bdeclined?\b|\brise\b|\brose\b|\bfell\b|\bup or down\b|增长|增幅|增速|变化|涨幅|跌幅|上升|下滑|涨了?|跌了?",
    ),
    (
        "exclude",
        r"\bexcluding\b|\bexclude[sd]?\b|\bexcept(?: for)?\b|\bother than\b|\bapart from\b|"
        r"\bnot counting\b|\bleaving out\b|除了|不包括|不含|剔除|排除|去掉|除去",
    ),
    ("columns", r"\bwith (?:their|its|the|his|her)\b|\bincluding (?:their|its|the)\b|\balong with\b|包括|带上|包含其"),
    (
        "compare",
        r"\bvs\.?|\bversus\b|\bcompared?\b|\bcomparison\b|\bagainst\b|\byoy\b|\bmom\b|\bqoq\b|"
        r"\byear over year\b|\bmonth over month\b|对比|比较|相比|比一比|[和跟与].{0,12}比|环比|同比",
    ),
    (
        "write",
        r"\bdelete\b|\bremove\b|\bupdate\b|\binsert\b|\bdrop\b|\btruncate\b|\balter\b|\bmodify\b|"
        r"\bset the\b|\bchange the\b|删除|删掉|修改|更新|插入|清空",
    ),
)
_COMPILED = tuple((kind, re.compile(p, _F)) for kind, p in _PATTERNS)

# superlatives that put the smallest first; any other "<adjective>est first" puts the largest first
_LOW_SUPERLATIVE = (
    r"(?:lowest|smallest|least|fewest|shortest|oldest|earliest|cheapest|slowest|lightest|closest|nearest|"
    r"quietest|youngest|narrowest|thinnest|weakest|shallowest)"
)
_ORDER = re.compile(
    rf"\b(?:(highest|largest|biggest|most|greatest|longest|newest|latest|most recent|most expensive|top|"
    rf"(?!{_LOW_SUPERLATIVE}\b)[a-z]{{3,}}est)|"
    rf"({_LOW_SUPERLATIVE}|least expensive))"
    r"(?:\s+[a-z]+){0,3}?\s+first\b|"
    r"\b(desc(?:ending)?)(?:\s+order)?\b|\b(asc(?:ending)?)(?:\s+order)?\b|"
    r"(从高到低|从大到小|由高到低|由大到小|降序|倒序|从多到少|[从由]新到旧|[从由]近到远|"
    r"\b(?:from\s+)?(?:high(?:est)?|big(?:gest)?|large(?:st)?|most|new(?:est)?)\s+to\s+"
    r"(?:low(?:est)?|small(?:est)?|least|old(?:est)?)\b)|"
    r"(从低到高|从小到大|由低到高|由小到大|升序|从少到多|[从由]旧到新|[从由]远到近|"
    r"\b(?:from\s+)?(?:low(?:est)?|small(?:est)?|least|old(?:est)?)\s+to\s+"
    r"(?:high(?:est)?|big(?:gest)?|large(?:st)?|most|new(?:est)?)\b)|"
    r"\b(worst|best)(?:\s+[a-z]+){0,3}?\s+first\b",
    _F,
)  # "worst first": the way ``meta.better`` says
# "the latest 5 orders", "5 most recent", "最近5笔": the newest or oldest N rows
_N = r"(\d+|one|two|three|four|five|six|seven|eight|nine|ten|twenty|fifty|hundred)"
_RECENT = re.compile(
    rf"\b(latest|newest|most recent|last|recent|oldest|earliest|first)\s+{_N}\b|"
    rf"\b{_N}\s+(latest|newest|most recent|oldest|earliest)\b|(最近|最新|最早)的?\s*(\d+)",
    re.IGNORECASE,
)
_BOUND_EN = re.compile(rf"(?<![\w$])({_GTE}|{_LTE}|{_GT}|{_LT}|{_EQ})\s*{NUMBER}", _F)
_BETWEEN = re.compile(
    rf"\bbetween\s+{NUMBER}(?:\s+(?:and|to)\s+|\s*[-–]\s*){NUMBER}|{NUMBER}\s*(?:-|到|至|~)\s*{NUMBER}\s*之间|"
    rf"\b(?:from\s+)?{NUMBER}\s+to\s+{NUMBER}",
    _F,
)
_WORD_NUMBER = (
    r"(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|fifty|hundred|"
    r"(?:half )?an?(?=\s+(?:hour|minute|second|day)s?\b))"
)  # "more than an hour", "half an hour"
_BOUND_EN_WORD = re.compile(rf"(?<![\w$])({_GTE}|{_LTE}|{_GT}|{_LT})\s+{_WORD_NUMBER}\b", _F)  # "more than three hours"
_BOUND_ZH_BEFORE = re.compile(rf"({'|'.join(sorted(_ZH_BEFORE, key=len, reverse=True))})\s*{NUMBER}", _F)
# "4 or more order lines", "45+ items", "100 or fewer": the bound word after the number
_BOUND_EN_AFTER = re.compile(
    rf"(?<![\w.]){NUMBER}\s*((?<!\s)\+(?![\d\w])|or (?:more|greater|higher|above|over|longer|"
    rf"bigger|larger)\b|and (?:above|up|over|more)\b|or (?:less|fewer|lower|below|under|"
    rf"shorter|smaller)\b|and (?:below|under|less)\b)",
    _F,
)
# "400 seats or more", "5 orders or fewer": the bound word after the number and the name it counts or measures
_BOUND_EN_NAMED_AFTER = re.compile(
    rf"(?<![\w.]){NUMBER}\s+(?:[a-z][\w-]*\s+){{1,3}}?(or (?:more|greater|higher|above|over|longer|bigger|larger|"
    rf"less|fewer|lower|below|under|shorter|smaller))\b",
    _F,
)
_BOUND_ZH_AFTER = re.compile(rf"{NUMBER}\s*({'|'.join(sorted(_ZH_AFTER, key=len, reverse=True))})", _F)
# "胜率超过五成", "三成五以上": tenths of a whole (五成 = 50%, 三成五 = 35%), as a percent bound
_ZH_DIGITS = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_TENTHS = r"([一二两三四五六七八九]|\d)成([一二三四五六七八九])?"
TENTHS_BOUND = re.compile(r"[一二两三四五六七八九\d]成")
_BOUND_ZH_TENTHS = (
    re.compile(rf"({'|'.join(sorted(_ZH_BEFORE, key=len, reverse=True))})\s*{_TENTHS}"),
    re.compile(rf"(){_TENTHS}\s*({'|'.join(sorted(_ZH_AFTER, key=len, reverse=True))})"),
)
_SIGN = re.compile(
    r"\b(negative|in debt|in the red|overdrawn)\b|\b(positive)\b|"
    r"(为负|负数|负值|小于零|欠款)|(为正|正数|大于零)",
    _F,
)
_STRING_OP = re.compile(
    r"\b(?:(?:start|begin)(?:s|ing)?|that (?:start|begin)s?)\s+with\s+['\"“]?([\w#&./-]+)['\"”]?|"
    r"\b(?:contain(?:s|ing)?|including the word|with the word|made of)\s+['\"“]?([\w#&./-]+)['\"”]?|"
    r"\b(?:end(?:s|ing)?)\s+with\s+['\"“]?([\w#&./-]+)['\"”]?|"
    r"以\s*['\"“]?([\w#&./-]+?)['\"”]?\s*开头|(?:包含|含有)\s*(?:['\"“「]([^'\"”」]+)['\"”」]|([A-Za-z0-9#&./-]+))",
    _F,
)

# "with 'forest' in the name", "have Live in the title", "with “love” in their titles": rows whose column (the
# words after the/its/their) holds the quoted or capitalised word
_IN_THE_NAME = re.compile(
    r"(?:\b(?:with|have|has|having)\s+)?(?:['\"“‘]([^'\"”’]{1,40})['\"”’]|\b([A-Z][\w#&./-]*))\s+"
    r"in\s+(?:the|its|their)\s+((?:[a-z]+\s+)?(?:name|title)s?)\b"
)


def amount(text: str) -> float | None:
    """ "9,000" -> 9000, "38万" -> 380000, "$1.5k" -> 1500; None when it is no number."""
    m = _NUMBER_RE.search(text)
    if m is None:
        return None
    try:
        value = float(m.group(1).replace(",", "").replace("−", "-"))
    except ValueError:
        return None
    return value * _SCALE.get((m.group(2) or "").lower(), 1)


_NUMBER_WORD = re.compile(
    r"\d|[一二三四五六七八九十两]|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|"
    r"twenty|fifty|hundred)\b",
    re.IGNORECASE,
)


def names_a_number(phrase: str) -> bool:
    """ "top 5", "the three longest", "前十": the phrase says how many."""
    return bool(_NUMBER_WORD.search(phrase))


def number_text(value: float) -> str:
    return str(int(value)) if value == int(value) else repr(value)


def _op_en(word: str) -> str:
    word = word.lower()
    for op, alternatives in (("gte", _GTE), ("lte", _LTE), ("gt", _GT), ("lt", _LT), ("equals", _EQ)):
        if re.fullmatch(alternatives, word, _F):
            return op
    return "equals"


_UNIT_AFTER = re.compile(  # "over 3 hours", "超过3小时的", "超过5个小时"
    r"\s*个?\s*(?:(hours?|hrs?|minutes?|mins?|seconds?|secs?|days?|milliseconds?|ms)\b|(小时|分钟|秒|天|毫秒)钟?)",
    re.IGNORECASE,
)
UNIT_SECONDS = {
    "hour": 3600,
    "hr": 3600,
    "minute": 60,
    "min": 60,
    "second": 1,
    "sec": 1,
    "day": 86400,
    "millisecond": 0.001,
    "ms": 0.001,
    "小时": 3600,
    "分钟": 60,
    "秒": 1,
    "天": 86400,
    "毫秒": 0.001,
}


_TITLE_UNIT = re.compile(
    r"\((?:in\s+)?(hours?|hrs?|minutes?|mins?|seconds?|secs?|days?|ms|milliseconds?)\)|"
    r"\b(hours|minutes|seconds|days|milliseconds)\b|(小时|分钟|秒|天|毫秒)"
)
UNIT_EN = {"小时": "hour", "分钟": "minute", "秒": "second", "天": "day", "毫秒": "ms"}


def unit_seconds(said: str) -> float | None:
    """The length in seconds of a unit as written ("hours", "mins", "ms", "分钟"), else None."""
    word = said.lower()
    return UNIT_SECONDS.get(word, UNIT_SECONDS.get(word.rstrip("s")))


def title_unit(member: object) -> str | None:
    """The unit of time a member's title names ("Arrival delay (minutes)" -> "minute"), a key of
    ``UNIT_SECONDS`` (English), else None."""
    found = _TITLE_UNIT.search((getattr(member, "title", "") or "").lower())
    if found is None:
        return None
    unit = next(g for g in found.groups() if g)
    return UNIT_EN.get(unit, unit if unit == "ms" else unit.rstrip("s"))


def _with_unit(text: str, mark: Mark) -> Mark:
    """A bound followed by a unit ("more than 5 hours", "超过30分钟") carries the unit's length in seconds and
    spans it; so does one with the unit inside ("10 minutes or longer")."""
    found = _UNIT_AFTER.match(text, mark.end)
    number = _NUMBER_RE.search(mark.text)
    inside = _UNIT_AFTER.match(text, mark.start + number.end()) if found is None and number is not None else None
    found = found or (inside if inside is not None and inside.end() <= mark.end else None)
    if found is None:
        return mark
    seconds = unit_seconds(found.group(1) or found.group(2))
    if seconds is None:
        return mark
    op, values = mark.data
    end = max(mark.end, found.end())
    return Mark("bound", mark.start, end, text[mark.start : end], (op, values, seconds))


def _bounds(text: str) -> list[Mark]:
    return [_with_unit(text, m) for m in _number_bounds(text)]


def _number_bounds(text: str) -> list[Mark]:
    out: list[Mark] = []
    for m in _BETWEEN.finditer(text):
        lo = amount(m.group(1) or m.group(5) or m.group(9) or "")
        hi = amount(m.group(3) or m.group(7) or m.group(11) or "")
        if lo is not None and hi is not None:
            out.append(Mark("bound", m.start(), m.end(), m.group(0), ("between", [lo, hi])))
    for pattern, op_of, number_at in ((_BOUND_EN, _op_en, 2), (_BOUND_ZH_BEFORE, _ZH_BEFORE.get, 2)):
        for m in pattern.finditer(text):
            value = amount(m.group(0)[m.start(number_at) - m.start() :])
            if value is not None and not any(o.start <= m.start() < o.end for o in out):
                out.append(Mark("bound", m.start(), m.end(), m.group(0), (op_of(m.group(1)), [value])))
    for m in _BOUND_EN_WORD.finditer(text):
        said = m.group(2).lower()
        value = 0.5 if said.startswith("half") else 1 if said in ("a", "an") else parse_number(said)
        if value is not None and not any(o.start <= m.start() < o.end for o in out):
            out.append(Mark("bound", m.start(), m.end(), m.group(0), (_op_en(m.group(1)), [float(value)])))
    for m in (*_BOUND_EN_AFTER.finditer(text), *_BOUND_EN_NAMED_AFTER.finditer(text)):
        value = amount(m.group(0))
        if value is not None and not any(o.start <= m.start() < o.end for o in out):
            low = re.search(r"less|fewer|lower|below|under|shorter|smaller", m.group(3), _F)
            out.append(Mark("bound", m.start(), m.end(), m.group(0), ("lte" if low else "gte", [value])))
    for m in _BOUND_ZH_AFTER.finditer(text):
        value = amount(m.group(0))
        if value is not None and not any(o.start <= m.start() < o.end for o in out):
            out.append(Mark("bound", m.start(), m.end(), m.group(0), (_ZH_AFTER[m.group(3)], [value])))
    return out + _tenths_bounds(text, out)


def _tenths_bounds(text: str, taken: list[Mark]) -> list[Mark]:
    """ "超过五成" (more than 50%), "三成五以上" (35% or more): a bound in tenths, its value in percent (the 成
    in its text says so to ``passes.filters``)."""
    out: list[Mark] = []
    for before, after in zip(_BOUND_ZH_TENTHS, (None, 4), strict=True):
        for m in before.finditer(text):
            tens, units = m.group(2), m.group(3)
            value = 10.0 * (int(tens) if tens.isdigit() else _ZH_DIGITS[tens]) + (_ZH_DIGITS[units] if units else 0)
            op = _ZH_AFTER[m.group(after)] if after else _ZH_BEFORE[m.group(1)]
            if not any(o.start <= m.start() < o.end for o in [*taken, *out]):
                out.append(Mark("bound", m.start(), m.end(), m.group(0), (op, [value])))
    return out


# "flights flown *by* planes ...", "tracks written by": a participle before "by" names an agent, no grouping
# (unless the participle itself groups or orders: "grouped by", "sorted by")
_AGENT = re.compile(
    r"\b(?!(?:grouped|sorted|ordered|ranked|listed|organi[sz]ed|aggregated|summari[sz]ed|"
    r"categori[sz]ed|classified|bucketed|segmented|split|broken|filtered|counted)\b)"
    r"(?:[a-z]+(?:ed|en)|flown|built|made|sold|bought|run|done|held|kept|sent|won|paid|spent)\s+$",
    re.IGNORECASE,
)


# ... when what follows names particular rows ("by planes *built* before 1990", "by *BUILDING* customers"),
# not a grouping ("units sold by genre")
_AGENT_ROWS = re.compile(
    r"^\s+(?:the\s+)?(?:[A-Z]\S*|\w+\s+(?:[a-z]+(?:ed|en)|built|made|who|that|which|whose|in|from|"
    r"with|of)\b)"
)


def _agent(text: str, m: re.Match[str]) -> bool:
    return (
        m.group(0).lower() == "by"
        and bool(_AGENT.search(text[max(0, m.start() - 20) : m.start()]))
        and bool(_AGENT_ROWS.match(text[m.end() :]))
    )


@lru_cache(maxsize=4096)
def _marks(text: str) -> tuple[Mark, ...]:
    out: list[Mark] = [
        Mark(kind, m.start(), m.end(), m.group(0))
        for kind, pattern in _COMPILED
        for m in pattern.finditer(text)
        if not (kind == "group" and _agent(text, m))
    ]
    for m in _ORDER.finditer(text):
        direction = m.group(7).lower() if m.group(7) else "desc" if (m.group(1) or m.group(3) or m.group(5)) else "asc"
        out.append(Mark("order", m.start(), m.end(), m.group(0), direction))
    out += _bounds(text)
    for m in _RECENT.finditer(text):
        word = (m.group(1) or m.group(4) or m.group(5)).lower()
        number = parse_number(m.group(2) or m.group(3) or m.group(6)) or 1
        newest = word not in ("oldest", "earliest", "first", "最早")
        out.append(Mark("recent", m.start(), m.end(), m.group(0), ("desc" if newest else "asc", number)))
    for m in _SIGN.finditer(text):
        op = "lt" if (m.group(1) or m.group(3)) else "gt"
        out.append(Mark("sign", m.start(), m.end(), m.group(0), (op, "0")))
    for m in _STRING_OP.finditer(text):
        value = next(g for g in m.groups() if g)
        op = "startsWith" if (m.group(1) or m.group(4)) else "endsWith" if m.group(3) else "contains"
        out.append(Mark("string_op", m.start(), m.end(), m.group(0), (op, value)))
    for m in _IN_THE_NAME.finditer(text):
        out.append(
            Mark("string_in", m.start(), m.end(), m.group(0), ("contains", m.group(1) or m.group(2), m.group(3)))
        )
    return tuple(sorted(out, key=lambda k: (k.start, -k.end)))


def marks(text: str) -> list[Mark]:
    """Every language span of ``text`` (see the module docstring), in text order."""
    return list(_marks(text))


def _word_list(text: str) -> frozenset[str]:
    return frozenset(text.split())


# the generic words for an amount of money: the column a cube's sum measure adds up (facts.amount_column)
# words that point back at something said before ("the big ones", "that one"): no part of a name written in
# lower case
REFERRING_WORDS = frozenset({"one", "ones", "it", "its", "them", "they", "this", "that", "these", "those"})

AMOUNT_WORD = re.compile(r"\bamounts?\b|\bmoney\b|\bvalue\b|\bworth\b|(?<!\w)\$\$+|金额|总额|总价|钱", re.IGNORECASE)

# verbs of money changing hands and the nouns a model names that money by, first choice first ("how much did
# we sell" asks the sales, "how much did they spend" their spend, else the sales)
MONEY_VERBS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("sell", "sells", "sold", "selling"), ("sales", "sale")),
    **dict.fromkeys(("spend", "spends", "spent", "spending"), ("spend", "spending", "sales")),
    **dict.fromkeys(("pay", "pays", "paid", "paying"), ("paid", "sales")),
    **dict.fromkeys(("buy", "buys", "bought", "buying"), ("purchases", "spend", "sales")),
    **dict.fromkeys(("earn", "earns", "earned", "earning"), ("earnings", "sales")),
    **dict.fromkeys(("bill", "billed", "invoice", "invoiced"), ("billing", "billed", "sales")),
}

# the same verbs in Chinese ("上个月一共卖了多少钱": the sales), longest first where one holds another
MONEY_VERBS_ZH: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("卖出", "售出", "卖了", "卖"), MONEY_VERBS["sell"]),
    **dict.fromkeys(("消费", "花了", "花费"), ("消费", *MONEY_VERBS["spend"])),
    **dict.fromkeys(("支付", "付了"), MONEY_VERBS["pay"]),
}

# irregular verbs whose noun names a column ("born in 1960" is the birth date, "Japanese-born" the birth country)
NOUN_OF_VERB = {"born": "birth", "died": "death", "sold": "sale", "bought": "purchase", "lost": "loss"}


def noun_of_verb(raw: str, norm: str) -> str:
    """The normalised noun an irregular verb names ("born" -> birth), else the word's own ``norm``."""
    noun = NOUN_OF_VERB.get(raw.lower())
    return norm_word(noun) if noun else norm


# verbs of something that happened (a sale, a payment, a delivery): meaningless beside rows of what happened,
# a dropped condition beside rows of things ("tracks that have been sold" read as all the tracks)
EVENT_VERBS = _word_list("""sell sold sells selling buy bought buys buying purchased pay paid pays spend spent spends
spending charged ship shipped ships deliver delivered delivers receive received receives join joined joins
joining hire hired registered signed enrolled move moves moved booked booking add added adds adding gain gained
gains acquire acquired acquires onboard onboarded""")
# a rate word right after a name ("late delivery *rate*", "退货*率*")
RATE_AFTER = re.compile(r"\s*(rates?\b|ratio\b|率)", re.IGNORECASE)
# the same in Chinese: words of rows coming about ("新增了多少会员": the members dated in the period)
EVENT_VERBS_ZH = frozenset({"新增", "新加", "新注册", "注册", "加入", "新开", "新签"})

# the question words that ask for someone ("who placed the most orders")
PERSON_WORD = re.compile(r"^(?:who|whom|whose|谁)$", re.IGNORECASE)

# words that carry no meaning of their own in a question about data: they are neither used nor unknown
STOPWORDS_EN = (
    _word_list("""
a an the of in on at to for from with and or but is are was were be been being do does did done have has had
having we our ours us i me my you your they them their it its this that these those there here what which who
whom whose how much many please can could would should will shall may might must tell give show let see know
want need like all any some each every also too very really just only ever currently overall now then so such
as than about into onto out up down off again further once per by via vs versus between among within during
before after since until while whether if when where why yes one ones both either neither other others same
own more most less least else thing things stuff way kind sort lot lots bit get got getting make made making
take took put set look looking find found use used using anything something everything someone anyone everyone
nobody thanks thank thx pls plz hi hello hey ok okay quick quickly roughly approximately around exactly actually
basically generally typically usually data database warehouse table tables record records row rows entry entries
information info figure figures number numbers stat stats statistic statistics metric metrics value values
report amount result results list listing detail details breakdown mix split grouped order ordered sorted rank
ranked ranking first last next previous top bottom best worst biggest largest highest lowest smallest longest
shortest through thru throughout along toward towards upon across come came comes coming go went goes going
gone bring brought brings bringing generate generated generates generating produce produced produces
contribute contributed contributes earn earned earns makes takes taken place placed places placing happen
happened happens occur occurred occurs appear appears appeared exist exists existed belong belongs belonged
include includes included including related associated linked based according given arrive arrived arrives handle
handled handles offer offered
offers available always often recently lately yet still already far whole entire full complete individual
respective various specific particular certain possible actual total altogether separately respectively broken
break breaking carry carries carried stock stocked issue issued issues recorded file filed single ve re ll
higher lower bigger smaller better worse greater larger fewer level levels tier tiers bucket band
he him his she her hers theirs itself themselves wrote write writes written run runs ran running
fly flies flying flew flown
inclusive inclusively over
goods merchandise
trend trends trending
leave leaves leaving depart departs departing
""")
    | EVENT_VERBS
)  # beside rows of what happened, its verb says nothing more
# phrases that name the business itself or say nothing ("in the store", "on file", "so far")
# "USA and Canada combined": named values taken together, not one row each
COMBINED = re.compile(r"\b(?:combined|together|altogether|in total|overall)\b|合计|一共|总共|加起来", re.IGNORECASE)
FILLER_PHRASES = re.compile(
    r"\b(?:the\s+)?(?:whole|entire|full)\s+(?:catalog(?:ue)?|range|inventory|assortment)\b|"
    r"\b(?:in|at|from|of|across|on|for)\s+(?:the|our|this)\s+(?:\w+\s+)?(?:store|shop|catalog(?:ue)?|company|"
    r"business|inventory|collection|library|database|warehouse|system|data|records?|registry|register)\b|"
    r"\bon file\b|\bso far\b|\ball[\s-]time\b|\bof all time\b|\bsince (?:the )?(?:start|beginning)\b|"
    # "Ted Williams' career batting average", "each season of his career": all of one's rows, no period;
    # a "career high" is one row's best, not said here
    r"\b(?:(?:of|in|over|during)\s+(?:his|her|their|its)\s+)?(?:career|lifetime)\b(?!\s+(?:high|low|best|worst))|"
    r"(?:整个)?(?:职业)?生涯(?:中|里|以来)?(?!最)|"
    r"\bto date\b|\bup to now\b|\b(?:i\.e|e\.g|viz)\.?(?!\w)|\bat all\b|\bif any\b|\bplease\b|"
    r"\b(?:the\s+)?(?:start|beginning|end)\s+of\b|\b(?:stack(?:s|ed)?|measure[sd]?)\s+up\b|"
    r"(?<=\bmost\s)(?:common|frequent|popular|usual)\b|(?<=\bleast\s)(?:common|frequent|popular|usual)\b|"
    r"(?:在|从)?(?:店里|库里|曲库里|系统里|数据里|库中|店中)|到?目前为止|迄今为止|截至目前|"
    r"大概|大约|左右|差不多|(?<=[日号])\s*(?:那一?天|当天)",  # "6月1日那天": the date just named
    re.IGNORECASE,
)
STOPWORDS_ZH = _word_list("""
的 了 是 在 有 和 与 及 或 吗 呢 吧 啊 呀 请 帮 我 我们 你 您 给 把 被 对 从 到 上 下
中 里 个 这 那 都 也 还 就 按 各 哪 什么 怎么 多少 一共 总共 一下 看看 看 查 查询 统计 一
共 们 所 其 之 该 以及 还有 分别 数据 情况 为 由 时 后 前 内 年 月 日 多 少 最 排 排名
排序 列 列出 出来 显示 哪些 名单 清单 明细 一览 每 各个 所有 全部 目前 现在 当前 相关 对应
具体 整体 总体 分别是 怎样 如何 么 个数 数量 次 笔 单 条 位 家 名 款 种 张 首 谁 哪个 哪里 一起 同时
并 并且 而且 及其 它们 他们 她们 它 他 她 自己 大 小 高 低 长 短 来 出 过 着 里面 当中 包含 含有
其中 以 跟 同 比 算 计算 带来 贡献 产生 发生 出现 属于 包括 涉及 关于 对于 通过 经过 根据
按照 来自 给出 接 做 用 让 使 能 会 要 想 需要 可以 一些 哪一个 多大 几 数 怎么样 信息 资料
详情 详细 因为 由于 负责 开 开出 开了 各自 买 买过 卖 卖出 带上 还是 一共有 是否 有没有 或者
以来 至今 为止 期间 所属 所在 但 但是 而 这些 那些 这个 那个 这样 顺便 另外 然后 再 一并 顺带
飞往 飞到 前往 到达 出发 去往 从 且 旗下 卖出去 卖掉 售出
支 场 件 辆 架 只 座 所 间 项 份 批 届 局 趟
趋势 走势 处理 处理了 办理
""")

# "how many minutes late": a value in a unit of time asked of each row (a column shown in that unit)
HOW_MANY_UNITS = r"\bhow\s+(?:many|much)\s+(hours?|minutes?|mins?|seconds?|secs?|days?)\s+"
