"""Plain text for the knowledge map: Markdown/HTML markup and punctuation-only tokens out of tags and descriptions."""
from __future__ import annotations

import html
import re
from collections.abc import Iterable

from django.utils.html import strip_tags

MAX_TAG_CHARS = 40

_IMAGE_OR_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_URL = re.compile(r"(?:https?|ftp)://\S+|www\.\S+", re.I)
# Block markers at the start of a line: headings, quotes, list bullets, fences, table rules.
_LINE_MARKER = re.compile(r"^[ \t]{0,3}(?:#{1,6}(?=\s|$)|>+|[-*+](?=\s)|`{3,}\w*|~{3,}\w*|\|?(?:\s*:?-{3,}:?\s*\|?)+$)",
                          re.M)
# Inline emphasis/code marks; an underscore inside a word (snake_case) is kept.
_INLINE_MARK = re.compile(r"[*`~|]+|(?<!\w)_+|_+(?!\w)")
# A heading mark left inside a line ("涉及##、乘坐"), with the list separator that followed it.
_STRAY_HASHES = re.compile(r"#{2,}[、，,；;]?")
_SPACES = re.compile(r"[ \t\u3000]+")
# Separators of the list-like texts the map is made of ("hr：乘坐、交通", "a, b; c").
_SEPARATED = re.compile(r"([、，,；;：:\n]+)")
_NO_WORD = re.compile(r"^[\W_]*$")
_EDGE = " \t\r\n#*_`~>|-–—:：、，,；;。.·"


def strip_markup(text: str) -> str:
    """`text` without HTML tags, entities, Markdown marks and URLs (link texts are kept)."""
    text = strip_tags(text or "")
    text = _IMAGE_OR_LINK.sub(r"\1", text)
    text = _URL.sub(" ", text)
    text = _LINE_MARKER.sub("", text)
    text = _STRAY_HASHES.sub("", text)
    text = _INLINE_MARK.sub("", text)
    return _SPACES.sub(" ", html.unescape(text))


def has_words(text: str) -> bool:
    """False for tokens made only of punctuation, symbols or spaces ("##", "、", "---")."""
    return not _NO_WORD.match(text)


def clean_tag(tag: object) -> str:
    """One scenario tag as plain text; "" when nothing but markup or punctuation is left."""
    text = strip_markup(str(tag)).replace("\n", " ").strip(_EDGE).strip()
    return text[:MAX_TAG_CHARS] if has_words(text) else ""


def clean_tags(tags: Iterable[object], *, limit: int | None = None) -> tuple[str, ...]:
    """Cleaned, non-empty, de-duplicated tags in their original order."""
    out = tuple(dict.fromkeys(t for t in (clean_tag(tag) for tag in tags) if t))
    return out if limit is None else out[:limit]


def clean_phrase(text: str | None) -> str:
    """A description as plain text: markup gone, and punctuation-only items of its lists dropped.

    "hr：##、乘坐、交通" → "hr：乘坐、交通". Each run of separators left behind by a dropped item
    keeps only its first separator.
    """
    parts = _SEPARATED.split(strip_markup(text or ""))
    kept: list[str] = []
    for index, part in enumerate(parts):
        if index % 2:  # a separator run
            if kept and not _SEPARATED.fullmatch(kept[-1]):
                kept.append(part)
            continue
        if part.strip() and has_words(part.strip()):
            kept.append(part)
    while kept and _SEPARATED.fullmatch(kept[-1]):
        kept.pop()
    return "".join(kept).strip()
