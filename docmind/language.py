"""Which language a question is in (Chinese or English), for canned texts written by code."""
from __future__ import annotations

import re

_CJK = re.compile(r"[\u3400-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")


def is_chinese(text: str) -> bool:
    """Chinese unless the text has Latin letters and no CJK at all (DocMind's users are Chinese-first)."""
    return bool(_CJK.search(text)) or not _LATIN.search(text)
