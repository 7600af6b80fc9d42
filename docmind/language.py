"""Which language a question is in (Chinese or English), for canned texts written by code; Traditional → Simplified."""
from __future__ import annotations

import re
from functools import lru_cache

import opencc

_CJK = re.compile(r"[\u3400-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")


def is_chinese(text: str) -> bool:
    """Chinese unless the text has Latin letters and no CJK at all (DocMind's users are Chinese-first)."""
    return bool(_CJK.search(text)) or not _LATIN.search(text)


@lru_cache(maxsize=1)
def _to_simplified():
    # Characters only (t2s), not Taiwan phrasing (tw2sp): the phrase tables also rewrite Simplified text
    # (戈登出生 → 戈注销生, 新增 → 添加, 影片 → 视频), which would break questions that were fine.
    return opencc.OpenCC("t2s").convert


def to_simplified(text: str) -> str:
    """The text in Simplified characters (OpenCC t2s); Simplified text and text without Chinese come back
    unchanged. The word matching of retrieval and of the offline answerer, and the classifier's patterns, are
    written for Simplified text: a question in Traditional characters shares almost no word with a
    Simplified document."""
    return _to_simplified()(text) if _CJK.search(text) else text
