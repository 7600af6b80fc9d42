"""`HeuristicClassifier`: the offline (and fallback) Tier-1 classifier — deterministic rules, no model."""
from __future__ import annotations

import re
from collections.abc import Sequence

from chat.types import Complexity, Intent, QueryClassification, Scope, Specificity
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
_ANAPHORA = re.compile(r"^(?:那|那么)?(?:它|他|她|这个|那个|这|那|上面|上述|前者|后者|该)|"
                       r"^(?:and |so |what about )?(?:it|this|that|they|them|those|these)\b|"
                       r"\b(?:it|this one|that one)\??$", re.I)
_MULTI_STEP = re.compile(r"分析|评估|方案|设计|步骤|以及|并且|同时|然后|analy[sz]e|evaluate|design|step by step|"
                         r"and then|as well as", re.I)
_CJK = re.compile(r"[\u4e00-\u9fff]")
_WORD = re.compile(r"[A-Za-z0-9]+")


def text_size(text: str) -> int:
    """CJK characters plus Latin words: a language-neutral sense of how long a question is."""
    return len(_CJK.findall(text)) + len(_WORD.findall(text))


def previous_user_message(history: Sequence[dict]) -> str:
    for turn in reversed(history):
        if turn.get("role") == "user" and str(turn.get("content", "")).strip():
            return str(turn["content"]).strip()
    return ""


class HeuristicClassifier:
    """Rules over the message text; follow-ups that lean on the last turn are expanded with it."""

    def run(self, *, message: str, history: Sequence[dict] = ()) -> QueryClassification:
        text = message.strip()
        size = text_size(text)
        intent = next((i for i, p in _INTENTS if p.search(text)), Intent.FACTUAL)
        leans_back = bool(_ANAPHORA.search(text)) and size <= 12
        previous = previous_user_message(history)
        rewritten, ambiguous = text, False
        if leans_back and previous:
            # Offline coreference: retrieval for "它的价格呢？" needs the subject of the last question.
            rewritten = f"{previous} {text}"
        elif leans_back or size <= 1:
            ambiguous = True
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
            memory_write_hints=memory_write_hints(text), source="heuristic",
        )
