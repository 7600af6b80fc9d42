"""`PathRouter`: which answer path a turn takes — SELECTED_DOC, RULE_PLANNER or AGENTIC."""
from __future__ import annotations

import re

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy as _lazy

from chat.types import Complexity, Intent, Mode, PathDecision, QueryClassification

# Asking to read the selected document as a whole, rather than a question that happens to have one selected.
DIRECT_READ_PATTERN = re.compile(
    r"总结|概括|摘要|概要|归纳|梳理|主要内容|讲了什么|说了什么|写了什么|讲的是什么|这篇|这份|这个文档|该文档|本文|全文|通读|"
    r"\bsummar(?:y|ise|ize|ising|izing)\b|\boverview\b|\btl;?dr\b|\bgist\b|key points|main points|"
    r"what (?:does|is) (?:this|the) (?:document|doc|file|paper|article) (?:say|about)",
    re.IGNORECASE,
)


def asks_to_read_document(text: str) -> bool:
    return bool(DIRECT_READ_PATTERN.search(text))


# The reason is shown to the user in the answer's trace, so it is in their language (the turn activates it).
_LEVELS = {Complexity.SIMPLE: _lazy("simple question"), Complexity.MEDIUM: _lazy("medium question"),
           Complexity.COMPLEX: _lazy("complex question")}


class PathRouter:
    """Direct read when asked → SELECTED_DOC; SIMPLE and unambiguous → RULE_PLANNER; otherwise AGENTIC."""

    def __init__(self, *, agentic_enabled: bool = True) -> None:
        self.agentic_enabled = agentic_enabled

    def run(self, *, classification: QueryClassification, selected_document_id: int | None,
            wants_direct_read: bool | None = None) -> PathDecision:
        if selected_document_id is not None:
            direct = wants_direct_read
            if direct is None:
                direct = classification.intent is Intent.SUMMARY or asks_to_read_document(classification.rewritten)
            if direct:
                return PathDecision(Mode.SELECTED_DOC, _("document %(id)s selected and asked to read it")
                                    % {"id": selected_document_id})
        if classification.complexity is Complexity.SIMPLE and not classification.is_ambiguous:
            return PathDecision(Mode.RULE_PLANNER, _("simple, unambiguous question: one-shot retrieval"))
        why = _("ambiguous question") if classification.is_ambiguous else str(_LEVELS[classification.complexity])
        if not self.agentic_enabled:
            return PathDecision(Mode.RULE_PLANNER, _("%(why)s: agentic loop preferred") % {"why": why},
                                fallback_note=_("agentic loop disabled: falling back to one-shot retrieval"))
        return PathDecision(Mode.AGENTIC, _("%(why)s: agentic retrieval loop") % {"why": why})
