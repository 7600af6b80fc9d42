"""HyDE: the small model writes a short passage, in the style of a document, that would answer the question; the
passage (free text) is embedded in place of the question. One prompt per language of the question."""
from __future__ import annotations

PROMPT_ZH = "请写一段简短的、像知识库文档原文一样的段落来回答下面的问题（不超过 150 字，不要说明这是假设）：\n{q}"
PROMPT_EN = ("Write a short passage, in the style of a knowledge-base document, that answers the question "
             "below (at most 100 words; do not say it is hypothetical):\n{q}")


def hyde_prompt(question: str, *, chinese: bool) -> str:
    return (PROMPT_ZH if chinese else PROMPT_EN).format(q=question.strip())
