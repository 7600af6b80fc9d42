"""`HeuristicClassifier`: the offline (and fallback) Tier-1 classifier — deterministic rules, no model."""
from __future__ import annotations

import re

from chat.types import Complexity, Intent, QueryClassification, Rewrite, Scope, Specificity
from chat.understanding.meta_intent_detector import memory_write_hints

_INTENTS: tuple[tuple[Intent, re.Pattern[str]], ...] = (
    (Intent.COMPARISON, re.compile(r"对比|区别|比较|异同|哪个更|\bvs\.?\b|versus|compar|difference", re.I)),
    (Intent.SUMMARY, re.compile(r"总结|概括|摘要|概述|归纳|summar|overview|tl;?dr", re.I)),
    (Intent.HOW_TO, re.compile(r"怎么|怎样|如何|步骤|流程|方法|\bhow (?:to|do|can|should)\b|steps? to", re.I)),
    (Intent.EXPLANATION, re.compile(r"为什么|为何|原因|解释|原理|\bwhy\b|explain|reason", re.I)),
)
_TIME = re.compile(r"最新|今天|今年|现在|目前|最近|当前|近期|本月|本周|(?:19|20)\d\d年?|latest|today|current|"
                   r"recent|now\b|this (?:year|month|week)|newest|up[- ]to[- ]date", re.I)
_MEMORY = re.compile(r"我的|我之前|我上次|根据我|适合我|对我来说|"
                     r"\bmy\b|\bfor me\b|\bi prefer\b|\bas i (?:said|told)", re.I)
_BROAD = re.compile(r"介绍|概述|讲讲|说说|有哪些|都有什么|tell me about|overview|what are the|introduce", re.I)
_MULTI_STEP = re.compile(r"分析|评估|方案|设计|步骤|以及|并且|同时|然后|analy[sz]e|evaluate|design|step by step|"
                         r"and then|as well as", re.I)
_CJK = re.compile(r"[\u4e00-\u9fff]")
_WORD = re.compile(r"[A-Za-z0-9]+")


def text_size(text: str) -> int:
    """CJK characters plus Latin words: a language-neutral sense of how long a question is."""
    return len(_CJK.findall(text)) + len(_WORD.findall(text))


class HeuristicClassifier:
    """Rules over the message text; the rewrite (follow-ups made standalone) comes from the rewriter."""

    def run(self, *, message: str, rewrite: Rewrite | None = None) -> QueryClassification:
        text = message.strip()
        size = text_size(text)
        intent = next((i for i, p in _INTENTS if p.search(text)), Intent.FACTUAL)
        rewrite = rewrite or Rewrite(text=text)
        rewritten = rewrite.text or text
        # A reference nothing in the conversation resolves ("它多少钱？" as a first question) cannot be searched.
        ambiguous = (rewrite.leans_back and not rewrite.resolved and size <= 12) or size <= 1
        if size <= 2 or ambiguous:
            specificity = Specificity.VAGUE
        elif _BROAD.search(text):
            specificity = Specificity.BROAD
        else:
            specificity = Specificity.SPECIFIC
        complexity = Complexity.SIMPLE
        if size > 60 or (_MULTI_STEP.search(text) and size > 12):
            complexity = Complexity.MEDIUM
        return QueryClassification(
            rewritten=rewritten, intent=intent, complexity=complexity, specificity=specificity,
            time_aware=bool(_TIME.search(text)), memory_aware=bool(_MEMORY.search(text)),
            is_ambiguous=ambiguous, scope=Scope.KNOWLEDGE, scope_confidence=0.6,
            memory_write_hints=memory_write_hints(text), source="heuristic", resolved=rewrite.resolved,
            unresolved_reference=rewrite.leans_back and not rewrite.resolved,
        )
