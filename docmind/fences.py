"""Untrusted text inside a prompt: fenced by a tag it cannot close or open, and labelled as data.

Document text, knowledge-domain text and external tool results are written by whoever uploaded, edited or
serves them, not by DocMind. Each reaches a model only between `<tag>` and `</tag>`, and anything inside that
a model could read as one of DocMind's fence tags — any case, spaces, `_`/`-`/zero-width characters between
the letters, full-width brackets, attributes — has its brackets replaced, so the data cannot end its fence
early and pose as DocMind's own text after it.
"""
from __future__ import annotations

import re

EXTERNAL_DATA = "external_data"
DOCUMENT_DATA = "document_data"
KNOWLEDGE_MAP_DATA = "knowledge_map_data"
TAGS = (EXTERNAL_DATA, DOCUMENT_DATA, KNOWLEDGE_MAP_DATA)

_OPEN, _CLOSE = "<＜﹤〈⟨", ">＞﹥〉⟩"
_FILLER = r"[\s_\-‐-―\u200b-\u200d\u2060\ufeff]*"


def _lookalike(tag: str) -> str:
    letters = [c for c in tag if c.isalnum()]
    name = _FILLER.join(re.escape(c) for c in letters)
    return f"[{_OPEN}][\\s/\\\\]*{name}(?![A-Za-z0-9])[^{_OPEN}{_CLOSE}]*[{_CLOSE}]"


_ANY_FENCE = re.compile("|".join(_lookalike(tag) for tag in TAGS), re.IGNORECASE)
_BRACKETS = str.maketrans({**{c: "‹" for c in _OPEN}, **{c: "›" for c in _CLOSE}})


def neutralize(text: str) -> str:
    """`text` with every look-alike of a fence tag defused (its brackets become ‹ ›); other text unchanged."""
    return _ANY_FENCE.sub(lambda m: m.group(0).translate(_BRACKETS), text)


def fenced(text: str, tag: str) -> str:
    if tag not in TAGS:
        raise ValueError(f"unknown fence tag {tag!r}")
    return f"<{tag}>\n{neutralize(text)}\n</{tag}>"
