"""`HypotheticalAnswerWriter`: a short hypothetical answer for HyDE (one-shot path only), small model."""
from __future__ import annotations

from docmind.language import is_chinese
from docmind.llm.base import ChatModel, LlmError

PROMPT_ZH = "请写一段简短的、像知识库文档原文一样的段落来回答下面的问题（不超过 150 字，不要说明这是假设）：\n{q}"
PROMPT_EN = ("Write a short passage, in the style of a knowledge-base document, that answers the question "
             "below (at most 100 words; do not say it is hypothetical):\n{q}")


class HypotheticalAnswerWriter:
    """Callable `question -> passage`; raises LlmError on failure or an empty reply (HyDE then skips)."""

    def __init__(self, chat_model: ChatModel, model: str, *, max_tokens: int = 256) -> None:
        if not model:
            raise ValueError("model name is required")
        if max_tokens <= 0:
            raise ValueError("max_tokens must be positive")
        self.chat_model = chat_model
        self.model = model
        self.max_tokens = max_tokens

    def __call__(self, question: str) -> str:
        prompt = (PROMPT_ZH if is_chinese(question) else PROMPT_EN).format(q=question.strip())
        reply = self.chat_model.complete([{"role": "user", "content": prompt}], model=self.model,
                                         temperature=0.3, max_tokens=self.max_tokens)
        passage = reply.content.strip()
        if not passage:
            raise LlmError(f"{self.model}: empty hypothetical answer")
        return passage
