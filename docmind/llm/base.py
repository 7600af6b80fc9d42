"""The `ChatModel` port: what every stage may ask of a chat LLM, errors included."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


class LlmError(Exception):
    """Any failure talking to the model (bad request, unexpected reply, auth…)."""


class LlmTimeout(LlmError):
    """The model did not answer (or stopped streaming) within the client timeout."""


class LlmCancelled(LlmError):
    """The caller's turn was cancelled (the client left) while the call was waiting."""


class LlmTruncated(LlmError):
    """The reply stopped at the token limit (finish_reason "length"): what was streamed is incomplete."""


class LlmUnavailable(LlmError):
    """5xx replies or connection failures that persisted after the bounded retries."""


@dataclass(frozen=True)
class ToolCall:
    """One tool call as the model sent it; `arguments` is raw JSON text and may be malformed."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ChatReply:
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    model: str = ""
    finish_reason: str = ""


@runtime_checkable
class ChatModel(Protocol):
    """An OpenAI-style chat model.

    Messages are OpenAI-format dicts: ``{"role": "system"|"user"|"assistant"|"tool", "content": …}``,
    assistant messages may carry ``tool_calls`` and tool messages a ``tool_call_id``.

    Contract:
    - ``complete`` returns the whole reply. Tool calls are returned, never executed: the caller
      runs its own bounded loop.
    - ``stream`` yields content deltas (non-empty strings) as they arrive; when the reply stopped at the
      token limit it raises ``LlmTruncated`` after the last delta, and a reply without any text is an
      ``LlmError`` (never an empty answer).
    - Both raise ``LlmTimeout`` when the call (or a stream between deltas) exceeds the timeout or
      the current call budget's deadline (``docmind.llm.budget``), ``LlmCancelled`` when the
      budget's turn is cancelled,
      ``LlmUnavailable`` on 5xx / connection failures after bounded retries, and ``LlmError``
      for anything else (4xx, malformed reply). They never raise other exception types.
    """

    def complete(self, messages: list[dict], *, model: str, tools: list[dict] | None = None,
                 temperature: float = 0.2, max_tokens: int | None = None) -> ChatReply: ...

    def stream(self, messages: list[dict], *, model: str, temperature: float = 0.2,
               max_tokens: int | None = None) -> Iterator[str]: ...
