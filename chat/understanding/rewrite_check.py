"""`RewriteValidator`: accepts the small model's standalone rewrite only when it can be one."""
from __future__ import annotations

import re

from chat.types import Rewrite
from chat.understanding.rewriter import ORDINAL_EN, ORDINAL_ZH
from docmind.language import is_chinese

_MARKERS = re.compile(r"\[\d{1,4}\]|[\r\n]")


class RewriteValidator:
    """A rewrite must be one line of plausible length in the question's language, and where the
    question refers back, it must not still lean on the same kind of reference."""

    def __init__(self, *, max_chars: int = 300, max_growth: int = 6) -> None:
        if max_chars <= 0 or max_growth <= 0:
            raise ValueError("max_chars and max_growth must be positive")
        self.max_chars = max_chars
        self.max_growth = max_growth

    def run(self, *, message: str, candidate: str, offline: Rewrite) -> tuple[str, str]:
        """(the rewrite to use, why the candidate was refused or "")."""
        text = candidate.strip()
        if not text:
            return offline.text, "empty rewrite"
        if _MARKERS.search(text):
            return offline.text, "rewrite has line breaks or citation markers"
        if len(text) > min(self.max_chars, self.max_growth * len(message) + 120):
            return offline.text, "rewrite too long"
        if is_chinese(text) != is_chinese(message):
            return offline.text, "rewrite changed the language"
        if offline.leans_back:
            ordinal = ORDINAL_ZH.search(message) or ORDINAL_EN.search(message)
            still = (ORDINAL_ZH.search(text) or ORDINAL_EN.search(text)) if ordinal else None
            if still is not None or text == message.strip():
                return offline.text, "rewrite left the reference unresolved"
        return text, ""
