"""`OpenAIChatModel`: the `ChatModel` port over the openai SDK against any OpenAI-compatible URL."""
from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterator
from typing import Any

import httpx2
import openai
from openai.types.chat import ChatCompletion
from pydantic import BaseModel

from docmind.llm.base import (
    STRUCTURED_OUTPUT_MODES,
    ChatReply,
    LlmCancelled,
    LlmError,
    LlmTimeout,
    LlmTruncated,
    LlmUnavailable,
    ToolCall,
)
from docmind.llm.budget import current_budget
from docmind.llm.structured import response_format_for
from docmind.llm.transport import budgeted_http_client
from docmind.telemetry.genai import ModelCall, model_call, server_of

logger = logging.getLogger(__name__)

# How OpenAI-compatible services word a refused reply schema: OpenAI names the parameter, older vLLM fails
# validating `response_format.type`, others name json_schema.
_REFUSED_SCHEMA = re.compile(r"response_format|json_schema|structured output", re.IGNORECASE)


class OpenAIChatModel:
    """Sync openai client; tool calls are returned to the caller, never executed by the SDK.

    Inside a ``call_budget`` (a chat turn) each call's timeout is bounded by the time left, retries
    are capped by the budget, and a cancel or a passed deadline ends even a silent connection.
    """

    def __init__(self, *, base_url: str, api_key: str, timeout: float, max_retries: int = 2) -> None:
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        if not 0 <= max_retries <= 5:
            raise ValueError("max_retries must be between 0 and 5")
        if not api_key:
            raise ValueError("api_key is required (offline mode has no ChatModel)")
        self.base_url = base_url
        self._server_address, self._server_port = server_of(base_url)
        self.timeout = timeout
        self.max_retries = max_retries
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries,
                                     http_client=budgeted_http_client(timeout=timeout))
        # Models that refused a reply schema: in "auto" mode they are not asked again while this client lives
        # (built once per process), so each refusal costs one extra request, not one per call.
        self._without_schema: set[str] = set()
        self._lock = threading.Lock()

    def __repr__(self) -> str:  # never show the key
        return f"OpenAIChatModel(base_url={self.base_url!r}, timeout={self.timeout})"

    def complete(self, messages: list[dict], *, model: str, tools: list[dict] | None = None,
                 temperature: float = 0.2, max_tokens: int | None = None,
                 response_schema: type[BaseModel] | None = None, structured_outputs: str = "auto") -> ChatReply:
        if structured_outputs not in STRUCTURED_OUTPUT_MODES:
            raise LlmError(f"structured_outputs must be one of {', '.join(STRUCTURED_OUTPUT_MODES)}")
        kwargs = _params(model, temperature, max_tokens)
        if tools:
            kwargs["tools"] = tools
        ask_schema = response_schema is not None and (
            structured_outputs == "on" or (structured_outputs == "auto" and model not in self._without_schema))
        with model_call(operation="chat", model=model, messages=messages, temperature=temperature,
                        max_tokens=max_tokens, server_address=self._server_address,
                        server_port=self._server_port) as call, _mapped_errors(model):
            if ask_schema:
                assert response_schema is not None
                response = self._create_with_schema(messages, kwargs, response_schema,
                                                    may_drop=structured_outputs == "auto")
            else:
                response = self._bounded_client().chat.completions.create(messages=messages, **kwargs)
            if not response.choices:
                raise LlmError(f"{model}: reply without choices")
            choice = response.choices[0]
            calls = tuple(
                ToolCall(id=c.id or "", name=c.function.name or "", arguments=c.function.arguments or "")
                for c in (choice.message.tool_calls or ()) if getattr(c, "function", None) is not None
            )
            _report(call, response, choice.finish_reason)
            call.output_text.append(choice.message.content or "")
            call.output_text.extend(c.arguments for c in calls)
            return ChatReply(content=choice.message.content or "", tool_calls=calls,
                             model=response.model or model, finish_reason=choice.finish_reason or "")

    def stream(self, messages: list[dict], *, model: str, temperature: float = 0.2,
               max_tokens: int | None = None) -> Iterator[str]:
        with model_call(operation="chat", model=model, messages=messages, temperature=temperature,
                        max_tokens=max_tokens, server_address=self._server_address,
                        server_port=self._server_port) as call, _mapped_errors(model):
            # include_usage: the last chunk carries the usage fields (token accounting per turn).
            response = self._bounded_client().chat.completions.create(
                messages=messages, stream=True, stream_options={"include_usage": True},
                **_params(model, temperature, max_tokens))
            said = False
            try:
                for chunk in response:
                    if not call.response_id and getattr(chunk, "id", None):
                        call.response_id = str(chunk.id)
                    if chunk.usage is not None:
                        _report(call, chunk, None)
                    for choice in chunk.choices:
                        if choice.finish_reason:
                            call.finish_reason = choice.finish_reason
                        if choice.delta and choice.delta.content:
                            call.output_text.append(choice.delta.content)
                            said = True
                            yield choice.delta.content
            finally:
                response.close()  # a consumer that stops early must not leak the connection
            # Neither may pass as a complete answer: a cut reply would be saved and cached as whole, an empty
            # one shown as an answer with a confidence badge.
            if call.finish_reason == "length":
                raise LlmTruncated(f"{model}: the reply stopped at the token limit")
            if not said:
                raise LlmError(f"{model}: empty reply (finish reason {call.finish_reason or 'none'})")

    def _create_with_schema(self, messages: list[dict], kwargs: dict[str, Any], schema: type[BaseModel], *,
                            may_drop: bool) -> ChatCompletion:
        """The request with `response_format`; when the endpoint refuses it and `may_drop`, once more without."""
        model = str(kwargs["model"])
        try:
            return self._bounded_client().chat.completions.create(
                messages=messages, response_format=response_format_for(schema), **kwargs)
        except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
            if not may_drop or not _REFUSED_SCHEMA.search(f"{exc.message} {exc.body}"):
                raise
            status = exc.status_code
        with self._lock:
            self._without_schema.add(model)
        logger.warning("%s refused a reply schema (HTTP %s): asking it without one from now on", model, status)
        return self._bounded_client().chat.completions.create(messages=messages, **kwargs)

    def _bounded_client(self) -> openai.OpenAI:
        """The client for one call: as configured, or limited by the current call budget."""
        budget = current_budget()
        if budget is None:
            return self._client
        if budget.cancelled:
            raise LlmCancelled("the chat turn was cancelled")
        left = budget.remaining()
        if left <= 0:
            raise LlmTimeout("the chat turn's deadline passed")
        timeout = min(self.timeout, left, budget.call_timeout or left)
        return self._client.with_options(timeout=timeout,
                                         max_retries=min(self.max_retries, budget.max_retries))


def _report(call: ModelCall, response: Any, finish_reason: str | None) -> None:
    """The API's usage fields and finish reason onto the call's span (absent usage → estimated)."""
    call.response_model = str(getattr(response, "model", "") or "")
    call.response_id = str(getattr(response, "id", "") or "") or call.response_id
    if finish_reason:
        call.finish_reason = finish_reason
    usage = getattr(response, "usage", None)
    prompt, completion = getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None)
    if isinstance(prompt, int) and isinstance(completion, int) and (prompt or completion):
        call.usage(input_tokens=prompt, output_tokens=completion)


def _params(model: str, temperature: float, max_tokens: int | None) -> dict[str, Any]:
    params: dict[str, Any] = {"model": model, "temperature": temperature}
    if max_tokens is not None:
        params["max_tokens"] = max_tokens
    return params


class _mapped_errors:
    """Translate the SDK's exceptions into the port's errors (messages carry no credentials)."""

    def __init__(self, model: str) -> None:
        self.model = model

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> bool:
        if exc is None or isinstance(exc, LlmError | GeneratorExit):
            return False
        # The budget ended the request (see docmind.llm.transport): say why, not "connection failed".
        budget = current_budget()
        if budget is not None and budget.cancelled:
            raise LlmCancelled(f"{self.model}: cancelled") from exc
        if budget is not None and budget.expired:
            raise LlmTimeout(f"{self.model}: the chat turn's deadline passed") from exc
        # Mid-stream failures surface as raw transport errors: the SDK only wraps the request itself.
        if isinstance(exc, openai.APITimeoutError | httpx2.TimeoutException):
            raise LlmTimeout(f"{self.model}: timed out") from exc
        if isinstance(exc, openai.APIConnectionError | httpx2.TransportError):
            raise LlmUnavailable(f"{self.model}: connection failed") from exc
        if isinstance(exc, openai.APIStatusError):
            if exc.status_code >= 500 or exc.status_code == 429:
                raise LlmUnavailable(f"{self.model}: HTTP {exc.status_code}") from exc
            raise LlmError(f"{self.model}: HTTP {exc.status_code}") from exc
        if isinstance(exc, openai.OpenAIError):
            raise LlmError(f"{self.model}: {type(exc).__name__}") from exc
        if isinstance(exc, ValueError | KeyError | TypeError | AttributeError):
            logger.warning("malformed reply from %s: %s", self.model, type(exc).__name__)
            raise LlmError(f"{self.model}: malformed reply") from exc
        return False
