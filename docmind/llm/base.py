"""The `ChatModel` port: what every stage may ask of a chat LLM, errors included."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from pydantic import BaseModel

# How a reply schema is asked for (``ChatModel.complete``'s ``structured_outputs``; the llm.structured_outputs option).
STRUCTURED_OUTPUT_MODES = ("auto", "on", "off")


def checked_structured_outputs(mode: str) -> str:
    """`mode` when it is one of STRUCTURED_OUTPUT_MODES; ValueError otherwise (for stage constructors)."""
    if mode not in STRUCTURED_OUTPUT_MODES:
        raise ValueError(f"structured_outputs must be one of {', '.join(STRUCTURED_OUTPUT_MODES)}")
    return mode


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
    - ``complete`` with a ``response_schema`` (a pydantic model) asks the endpoint for a reply that fits it (OpenAI's
      ``response_format`` json_schema) unless ``structured_outputs`` is "off". With "auto", an endpoint that refuses
      the request (HTTP 400 naming it) is asked once more without it, and that model is not asked again for the
      rest of the process; with "on" the refusal is an ``LlmError``. The reply is text either way and untrusted: an
      endpoint may ignore the schema, so the caller still validates it (``docmind.llm.replies.parse_reply``).
    - Both raise ``LlmTimeout`` when the call (or a stream between deltas) exceeds the timeout or
      the current call budget's deadline (``docmind.llm.budget``), ``LlmCancelled`` when the
      budget's turn is cancelled,
      ``LlmUnavailable`` on 5xx / connection failures after bounded retries, and ``LlmError``
      for anything else (4xx, malformed reply). They never raise other exception types.
    """

    def complete(self, messages: list[dict], *, model: str, tools: list[dict] | None = None,
                 temperature: float = 0.2, max_tokens: int | None = None,
                 response_schema: type[BaseModel] | None = None, structured_outputs: str = "auto") -> ChatReply: ...

    def stream(self, messages: list[dict], *, model: str, temperature: float = 0.2,
               max_tokens: int | None = None) -> Iterator[str]: ...
