"""`HistorySummarizer`: the cheap model condenses the dropped head of a long conversation, so it is not lost."""
from __future__ import annotations

from docmind.llm.base import ChatModel, LlmError
from docmind.prompts.summary import summary_prompt
from docmind.tokens import estimate_tokens, truncate_to_tokens


class HistorySummarizer:
    """Callable `(text, budget_tokens) -> summary`; raises LlmError when the model fails or says nothing,
    so that the assembler falls back to a hard cut."""

    def __init__(self, chat_model: ChatModel, model: str, *, input_max_tokens: int = 4000) -> None:
        if not model:
            raise ValueError("model name is required")
        if input_max_tokens <= 0:
            raise ValueError("input_max_tokens must be positive")
        self.chat_model = chat_model
        self.model = model
        self.input_max_tokens = input_max_tokens

    def __call__(self, text: str, budget_tokens: int) -> str:
        if budget_tokens <= 0:
            raise ValueError("no budget for a summary")
        # The newest part of the dropped head matters most to what follows it.
        source = truncate_to_tokens(text, self.input_max_tokens, keep="tail")
        reply = self.chat_model.complete(
            [{"role": "user", "content": summary_prompt(text=source, chars=budget_tokens)}],
            model=self.model, temperature=0.0, max_tokens=budget_tokens * 2,
        )
        summary = reply.content.strip()
        if not summary:
            raise LlmError(f"{self.model}: empty summary")
        if estimate_tokens(summary) > budget_tokens:
            summary = truncate_to_tokens(summary, budget_tokens, keep="head")
        return summary
