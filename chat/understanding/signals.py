"""`DeterministicSignals`: multi-focus cues that raise complexity to at least MEDIUM, never lower it."""
from __future__ import annotations

import re
from dataclasses import replace

from chat.types import Complexity, QueryClassification

# Multi-focus questions need the agentic loop; a classifier that called them SIMPLE is overruled.
STRONG_COMPLEX_PATTERN = re.compile(
    r"对比|分别|区别|比较|哪个更|哪一个更|异同|有何不同|有什么不同|"
    r"\bvs\.?(?=\s|$)|\bversus\b|\bcompar(?:e|ed|ing|ison)\b|\bdifferences?\b|\bdiffer\b|\bboth\b",
    re.IGNORECASE,
)
_QUESTION_MARKS = re.compile(r"[?？]")


def has_multi_focus(message: str) -> bool:
    return bool(STRONG_COMPLEX_PATTERN.search(message)) or len(_QUESTION_MARKS.findall(message)) >= 2


class DeterministicSignals:
    """Deterministic signals (对比, 分别, vs, several questions) only ever raise the complexity, never lower it."""

    def run(self, *, classification: QueryClassification, message: str) -> QueryClassification:
        if not has_multi_focus(message):
            return classification
        raised = classification.complexity.at_least(Complexity.MEDIUM)
        if raised is classification.complexity:
            return classification
        return replace(classification, complexity=raised)
