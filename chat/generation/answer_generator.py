"""`AnswerGenerator`: streams the answer — remote main model, or the offline extractive answerer."""
from __future__ import annotations

from collections.abc import Iterator, Sequence

from chat.offline.extractive import ExtractiveAnswerer
from chat.types import AnswerShape, PromptParts
from docmind.llm.base import ChatModel

# Offline text is released in small pieces so the page streams it like model output.
OFFLINE_PIECE_CHARS = 16


class AnswerGenerator:
    def __init__(self, chat_model: ChatModel | None, model: str, temperature: float, *,
                 max_tokens: int | None = None, extractive: ExtractiveAnswerer | None = None) -> None:
        if chat_model is not None and not model:
            raise ValueError("model name is required with a chat model")
        if not 0 <= temperature <= 2:
            raise ValueError("temperature must be within [0, 2]")
        if max_tokens is not None and max_tokens <= 0:
            raise ValueError("max_tokens must be positive")
        self.chat_model = chat_model
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self._extractive = extractive or ExtractiveAnswerer()

    @property
    def is_extractive(self) -> bool:
        return self.chat_model is None

    def run(self, *, prompt: PromptParts, question: str, shape: AnswerShape = AnswerShape.FACTS,
            sides: Sequence[str] = ()) -> Iterator[str]:
        """Content deltas. Remote errors (LlmTimeout / LlmUnavailable / LlmError) propagate to the caller,
        possibly after some deltas were already yielded."""
        if self.chat_model is not None:
            yield from self.chat_model.stream(prompt.messages, model=self.model, temperature=self.temperature,
                                              max_tokens=self.max_tokens)
            return
        yield from self.pieces(self.written(prompt=prompt, question=question, shape=shape, sides=sides))

    def written(self, *, prompt: PromptParts, question: str, shape: AnswerShape = AnswerShape.FACTS,
                sides: Sequence[str] = ()) -> str:
        """The offline answer whole, before it streams (offline only: a model's answer exists only as it streams)."""
        if self.chat_model is not None:
            raise ValueError("only the offline answer is written before it streams")
        return self._extractive.run(question=question, chunks=prompt.chunks, low_confidence=prompt.low_confidence,
                                    shape=shape, sides=sides, style=prompt.answer_style,
                                    applied=prompt.memory_applied, unsaid=prompt.unsaid)

    @staticmethod
    def pieces(answer: str) -> Iterator[str]:
        """Offline text in small pieces, so the page streams it like model output."""
        for i in range(0, len(answer), OFFLINE_PIECE_CHARS):
            yield answer[i:i + OFFLINE_PIECE_CHARS]
