"""Answer-style preferences a memory may state (answer language, brevity), for the offline answerer."""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_EN = re.compile(r"(?:用|使用|以)?英文|英语|\bin english\b|\benglish (?:answers?|replies|responses)\b", re.I)
_ZH = re.compile(r"(?:用|使用|以)?中文|汉语|普通话|\bin chinese\b|\bchinese (?:answers?|replies)\b", re.I)
_SHORT = re.compile(r"简洁|简短|简明|精简|言简意赅|短一点|不要太长|\b(?:short|brief|concise|succinct|terse)\b", re.I)
_LONG = re.compile(r"详细|详尽|具体一点|展开|\b(?:detailed|thorough|in[- ]depth|long(?:er)?)\b", re.I)
# A preference about answers, not about tea: the statement must talk about replies.
_ABOUT_ANSWERS = re.compile(r"回答|回复|答案|解释|说明|讲解|\b(?:answers?|repl(?:y|ies)|responses?|explanations?)\b|"
                            r"\b(?:respond|reply|answer|write|explain)\b", re.I)
_NEGATED = re.compile(r"不(?:要|喜欢|想要|需要)|别|\bno\b|\bnot\b|\bdon'?t\b|\bnever\b", re.I)


@dataclass(frozen=True)
class AnswerStyle:
    language: str | None = None  # "en" | "zh"
    brevity: str | None = None  # "short" | "detailed"
    sources: tuple[str, ...] = ()  # the memories these come from, newest first

    @property
    def applies(self) -> bool:
        return self.language is not None or self.brevity is not None


def parse_answer_style(texts: Sequence[str]) -> AnswerStyle:
    """The first (newest) statement wins for each aspect; negated statements are ignored."""
    language = brevity = None
    sources: list[str] = []
    for text in texts:
        if not _ABOUT_ANSWERS.search(text) or _NEGATED.search(text):
            continue
        used = False
        if language is None and (_EN.search(text) or _ZH.search(text)):
            language = "en" if _EN.search(text) else "zh"
            used = True
        if brevity is None and (_SHORT.search(text) or _LONG.search(text)):
            brevity = "short" if _SHORT.search(text) else "detailed"
            used = True
        if used:
            sources.append(text)
    return AnswerStyle(language=language, brevity=brevity, sources=tuple(sources))
