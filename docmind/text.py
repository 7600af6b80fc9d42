"""Text helpers shared by retrieval stages: salient query terms, character bigrams, sentence ends."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

# Sentence terminators a compression window may be snapped to (Chinese and English).
SENTENCE_ENDS = frozenset("。！？；.!?\n")

RARE_IDF_SHARE = 0.7

_PUNCT_OR_SPACE = re.compile(r"^[\W_]+$", re.UNICODE)
_SPACES = re.compile(r"\s+")

# Question words and fillers: they appear in the question but never in the evidence, so counting
# them would make every chunk look like it misses part of the query.
STOP_WORDS = frozenset("""
的 了 和 与 及 或 是 在 为 被 由 对 从 把 将 也 就 都 而 又 并 等 之 其 以 于 上 下 中 个 这 那 此 该 各 每
什么 哪个 哪些 哪里 哪儿 哪 谁 何 几 多少 怎么 怎样 怎么样 如何 为何 为什么 吗 呢 吧 啊 呀 么 是否 有没有 有 没有
请问 请 一下 告诉 我 你 他 她 它 我们 你们 他们 时候 多久 何时 哪年 哪一年 哪位 是不是 能否 可以 能 会 要 想
a an the of to in on at for by with from is are was were be been what which who whom whose when where why how
do does did can could would should will and or not no this that these those it its as about please
""".split())


@lru_cache(maxsize=1)
def _idf() -> tuple[dict[str, float], float]:
    """jieba's bundled IDF table: rarity without corpus statistics (unknown words count as rare)."""
    import jieba.analyse

    table = jieba.analyse.default_tfidf
    return table.idf_freq, float(table.median_idf)


@lru_cache(maxsize=4096)
def _cut(text: str) -> tuple[str, ...]:
    import jieba

    return tuple(jieba.cut_for_search(text))


@dataclass(frozen=True)
class Term:
    text: str
    weight: float
    rare: bool


def salient_terms(query: str) -> tuple[Term, ...]:
    """The query's content words, weighted by length and rarity; sub-words of a longer term are dropped.

    Weight = min(len, 4) × idf / median idf (capped at 1.5): long and rare words such as names
    carry the question; a term counts as rare (an "entity") when its idf is at least
    RARE_IDF_SHARE of the median (jieba's median is high: most of its vocabulary is rare).
    """
    idf, median = _idf()
    seen: dict[str, Term] = {}
    for raw in _cut(query.lower()):
        token = raw.strip()
        if not token or token in STOP_WORDS or _PUNCT_OR_SPACE.match(token):
            continue
        if token.startswith("哪"):  # 哪款 / 哪种 / 哪年…: interrogatives jieba does not know
            continue
        if len(token) == 1 and not token.isascii():
            continue  # single CJK characters are too unspecific to count as evidence of a match
        rarity = min(1.5, idf.get(token, median * 1.2) / median)
        weight = min(len(token), 4) * rarity
        seen[token] = Term(token, round(weight, 4), idf.get(token, math.inf) >= RARE_IDF_SHARE * median)
    terms = list(seen.values())
    # cut_for_search yields 泡泡 and 泡泡堂: keep only the longest so a hit is not counted twice.
    return tuple(t for t in terms if not any(t.text != o.text and t.text in o.text for o in terms))


def normalise(text: str) -> str:
    return _SPACES.sub(" ", text).strip().lower()


def bigrams(text: str) -> frozenset[str]:
    """Character bigrams of the whitespace-normalised text (a single character is its own gram)."""
    compact = normalise(text)
    if len(compact) < 2:
        return frozenset([compact]) if compact else frozenset()
    return frozenset(compact[i:i + 2] for i in range(len(compact) - 1))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def coverage(terms: tuple[Term, ...], text: str) -> float:
    """Weighted share of `terms` that occur in `text`; 0 when there are no terms."""
    total = sum(t.weight for t in terms)
    if total <= 0:
        return 0.0
    haystack = text.lower()
    return sum(t.weight for t in terms if t.text in haystack) / total
