"""Search terms for retrieval (engine R reuses them): content words and phrases, EN and ZH.

Chinese is segmented with jieba (loaded once, lazily, ~0.5 s); glossary words can be added with
``add_vocabulary`` so domain terms stay whole. Time words, stopwords and punctuation are dropped;
adjacent content words are also kept as 2- and 3-grams ("return rate", "average invoice value", "营业额"), capitalised
spans as phrases ("Acme T9 drill"), quoted strings verbatim.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable, Sequence
from functools import lru_cache

_LOCK = threading.Lock()
_EN_STOP = frozenset(
    re.split(
        r"\s+",
        """
a an the of in on at for to from by with and or vs versus is are was were be been being do does did what which who
whom whose when where why how many much me my our we us you your i it its their them they this that these those
show list give tell find get display please can could would should will shall may might must have has had there
here than then as per each every all any some about into over under between during since until through top bottom
highest lowest most least best worst largest smallest biggest more less compare compared comparison against what's
whats also only just not no yes so if up down out off same period last next previous past current year years month
months quarter quarters week weeks day days today yesterday ytd mtd qtd daily weekly monthly quarterly yearly annual
trend trends over time did do much many data let see look
""".strip(),
    )
)
_ZH_STOP = frozenset(
    re.split(
        r"\s+",
        """
的 了 是 在 和 与 及 以及 或 或者 吗 呢 吧 啊 呀 么 什么 怎么 怎样 怎么样 如何 多少 哪些 哪个 哪 几 请 帮
帮我 我 我们 你 给 给我 看 看看 一下 查询 查 查看 显示 列出 列 统计 一共 共 总共 所有 全部 各 每个 每 按
按照 分 对比 比较 相比 同比 环比 情况 数据 有 有没有 没有 为 被 把 从 到 至 之间 以来 至今 其中 其 他们
它们 这些 那些 这个 那个 前 后 最 最近 近 过去 期间 时候
本月 上月 上个月 今年 去年 前年 本季度 上季度 本周 上周 今天 昨天 同期 年 月 日 天 周 季度 趋势 排名 排行 名 个 top
""".strip(),
    )
)
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'\-]*|\d+[A-Za-z]+[A-Za-z0-9]*")
_QUOTED = re.compile(r"\"([^\"]{2,80})\"|'([^']{2,80})'|《([^》]{1,80})》|「([^」]{1,80})」")
_CAPITALISED = re.compile(r"\b[A-Z][A-Za-z0-9]*(?:\s+[A-Z0-9][A-Za-z0-9]*)*(?:\s+[a-z]+)?", re.ASCII)
_extra_words: set[str] = set()


@lru_cache(maxsize=1)
def _jieba():
    import jieba

    with _LOCK:
        jieba.setLogLevel(logging.WARNING)
        jieba.initialize()
        for word in _extra_words:
            jieba.add_word(word)
    return jieba


def warm_up() -> None:
    """Load jieba's dictionary now (~0.5 s once) instead of on the first Chinese question."""
    _jieba()


def add_vocabulary(words: Iterable[str]) -> None:
    """Keep these words whole when segmenting Chinese (e.g. glossary terms "营业额", "均价")."""
    new = {w.strip() for w in words if w and w.strip() and _CJK_RUN.search(w)}
    _extra_words.update(new)
    if _jieba.cache_info().currsize:
        for word in new:
            _jieba().add_word(word)


def segment(text: str) -> list[str]:
    """jieba tokens of ``text`` (Chinese-aware; other characters pass through as tokens)."""
    return [t for t in _jieba().lcut(text) if t.strip()]


def extract_terms(text: str, *, blank_spans: Sequence[tuple[int, int]] = ()) -> list[str]:
    """Ordered, de-duplicated search terms; characters in ``blank_spans`` (time phrases) are ignored."""
    chars = list(text)
    for start, end in blank_spans:
        chars[start:end] = " " * (end - start)
    body = "".join(chars)
    terms = [*_phrases(body), *_token_terms(body)]
    seen: set[str] = set()
    out = []
    for term in terms:
        key = term.lower()
        if key not in seen:
            seen.add(key)
            out.append(term)
    return out


def _phrases(body: str) -> list[str]:
    """Quoted phrases, then capitalised runs (names) without their stopwords at either end."""
    terms = [next(g for g in m.groups() if g) for m in _QUOTED.finditer(body)]
    for m in _CAPITALISED.finditer(body):
        phrase = _trim_phrase(m.group(0))
        if phrase and (" " in phrase or len(phrase) > 1) and phrase.lower() not in _EN_STOP:
            terms.append(phrase)
    return terms


def _token_terms(body: str) -> list[str]:
    """Content tokens and the bi- and trigrams of each run of them (a run breaks at a stopword, punctuation
    or a change between ASCII and Chinese)."""
    terms: list[str] = []
    run: list[str] = []
    for token in _tokens(body):
        if token is None or (run and token.isascii() != run[-1].isascii()):
            run = []
        if token is None:
            continue
        if not _is_weak(token):
            terms.append(token)
        run.append(token)
        for n in (2, 3):
            if len(run) >= n:
                terms.append((" " if token.isascii() else "").join(run[-n:]))
    return terms


def _trim_phrase(phrase: str) -> str:
    words = phrase.split()
    while words and words[0].lower() in _EN_STOP:
        words.pop(0)
    while words and words[-1].lower() in _EN_STOP:
        words.pop()
    return " ".join(words)


def _tokens(body: str) -> Iterable[str | None]:
    """Content tokens in order; None marks a break (stopword, punctuation) for bigrams."""
    for piece in re.split(r"([\u3400-\u4dbf\u4e00-\u9fff]+)", body):
        if not piece:
            continue
        if _CJK_RUN.fullmatch(piece):
            for token in segment(piece):
                if token in _ZH_STOP:
                    yield None
                else:
                    yield token
            yield None
            continue
        for chunk in re.split(r"[,.;:!?()\[\]{}<>|/\\\"]+", piece):
            for word in chunk.split():
                m = _WORD.fullmatch(word.strip("'-"))
                if not m or word.lower() in _EN_STOP:
                    yield None
                else:
                    yield m.group(0).lower() if not _is_name_like(m.group(0)) else m.group(0)
            yield None


def _is_weak(token: str) -> bool:
    """Single Chinese characters count only inside n-grams ("库存"+"量" -> "库存量")."""
    return len(token) == 1 and not token.isascii() and token not in _extra_words


def _is_name_like(word: str) -> bool:
    return any(c.isdigit() for c in word) or (word.isupper() and len(word) > 1)
