"""`HypotheticalAnswerWriter`: a short hypothetical answer for HyDE (one-shot path only), small model."""
from __future__ import annotations

from docmind.language import is_chinese
from docmind.llm.base import ChatModel, LlmError
from docmind.prompts.hyde import hyde_prompt


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
        prompt = hyde_prompt(question, chinese=is_chinese(question))
        reply = self.chat_model.complete([{"role": "user", "content": prompt}], model=self.model,
                                         temperature=0.3, max_tokens=self.max_tokens)
        passage = reply.content.strip()
        if not passage:
            raise LlmError(f"{self.model}: empty hypothetical answer")
        return passage
