"""Which language a question is in (Chinese or English), for canned texts written by code; Traditional → Simplified."""
from __future__ import annotations

import re
from functools import lru_cache

_CJK = re.compile(r"[\u3400-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")


def is_chinese(text: str) -> bool:
    """Chinese unless the text has Latin letters and no CJK at all (DocMind's users are Chinese-first)."""
    return bool(_CJK.search(text)) or not _LATIN.search(text)


@lru_cache(maxsize=1)
def _to_simplified():
    import opencc

    # Taiwan phrasing too (軟體 → 软件, 印表機 → 打印机), not only the characters: a reader who writes
    # Traditional Chinese also uses those words.
    return opencc.OpenCC("tw2sp").convert


def to_simplified(text: str) -> str:
    """The text in Simplified characters and mainland phrasing (OpenCC tw2sp); Simplified text and text without
    Chinese come back unchanged. The word matching of retrieval and of the offline answerer, and the
    classifier's patterns, are written for Simplified text: a question in Traditional characters shares
    almost no word with a Simplified document."""
    return _to_simplified()(text) if _CJK.search(text) else text
