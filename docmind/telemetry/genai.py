"""A span per model call with the OpenTelemetry GenAI semantic conventions, and its token usage."""
from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from opentelemetry.trace import SpanKind, Status, StatusCode

from docmind.llm.base import LlmCancelled
from docmind.telemetry import metrics
from docmind.telemetry.tracing import tracer
from docmind.telemetry.usage import estimate_messages, record_usage
from docmind.tokens import estimate_tokens


@dataclass
class ModelCall:
    """What the client learns while the call runs; the span and the turn's usage get it on exit."""

    model: str
    messages: list[dict]
    response_model: str = ""
    response_id: str = ""
    finish_reason: str = ""
    input_tokens: int | None = None
    output_tokens: int | None = None
    output_text: list[str] = field(default_factory=list)

    def usage(self, *, input_tokens: int | None, output_tokens: int | None) -> None:
        self.input_tokens, self.output_tokens = input_tokens, output_tokens

    @property
    def reported(self) -> bool:
        return self.input_tokens is not None and self.output_tokens is not None


def server_of(base_url: str) -> tuple[str, int | None]:
    """`server.address` and `server.port` of an API base URL (the scheme's default port when none is given)."""
    parts = urlsplit(base_url)
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is None and parts.scheme in ("http", "https"):
        port = 443 if parts.scheme == "https" else 80
    return parts.hostname or "", port


def _is_cancellation(exc: BaseException) -> bool:
    return isinstance(exc, LlmCancelled)


@contextlib.contextmanager
def model_call(*, operation: str, model: str, messages: list[dict], temperature: float | None = None,
               max_tokens: int | None = None, provider: str = "openai", server_address: str = "",
               server_port: int | None = None) -> Iterator[ModelCall]:
    """The call as a CLIENT span (the model is a remote service). Usage is recorded and billed for a
    call that completed (estimated when the API reported none) and, for a failed or cancelled one,
    only when the API did report it: an estimate of a request that failed is not a cost."""
    attributes: dict[str, Any] = {"gen_ai.operation.name": operation, "gen_ai.provider.name": provider,
                                  "gen_ai.system": provider, "gen_ai.request.model": model}
    if server_address:
        attributes["server.address"] = server_address
    if server_port is not None:
        attributes["server.port"] = server_port
    if temperature is not None:
        attributes["gen_ai.request.temperature"] = temperature
    if max_tokens is not None:
        attributes["gen_ai.request.max_tokens"] = max_tokens
    call = ModelCall(model=model, messages=messages)
    started = time.perf_counter()
    failed = False
    with tracer().start_as_current_span(f"{operation} {model}", kind=SpanKind.CLIENT, attributes=attributes,
                                        record_exception=False, set_status_on_exception=False) as current:
        try:
            yield call
        except GeneratorExit:
            # The consumer stopped reading a stream (a client that left): not a model failure.
            failed = True
            metrics.LLM_CANCELLED.labels(model=model).inc()
            raise
        except Exception as exc:
            failed = True
            if _is_cancellation(exc):
                metrics.LLM_CANCELLED.labels(model=model).inc()
                current.set_attribute("docmind.cancelled", True)
            else:
                metrics.LLM_ERRORS.labels(kind=type(exc).__name__).inc()
                current.record_exception(exc)
                current.set_status(Status(StatusCode.ERROR, type(exc).__name__))
                current.set_attribute("error.type", type(exc).__name__)
            raise
        finally:
            _finish(current, call, operation=operation, model=model, messages=messages, failed=failed,
                    seconds=time.perf_counter() - started)


def _finish(current: Any, call: ModelCall, *, operation: str, model: str, messages: list[dict], failed: bool,
            seconds: float) -> None:
    metrics.LLM_SECONDS.labels(model=model, operation=operation).observe(seconds)
    if current.is_recording():
        if call.response_model:
            current.set_attribute("gen_ai.response.model", call.response_model)
        if call.response_id:
            current.set_attribute("gen_ai.response.id", call.response_id)
        if call.finish_reason:
            current.set_attribute("gen_ai.response.finish_reasons", [call.finish_reason])
    if failed and not call.reported:
        return
    estimated = not call.reported
    input_tokens = call.input_tokens if call.input_tokens is not None else estimate_messages(messages)
    output_tokens = (call.output_tokens if call.output_tokens is not None
                     else estimate_tokens("".join(call.output_text)))
    record_usage(model=model, input_tokens=input_tokens, output_tokens=output_tokens, estimated=estimated)
    metrics.LLM_TOKENS.labels(model=model, direction="input").inc(input_tokens)
    metrics.LLM_TOKENS.labels(model=model, direction="output").inc(output_tokens)
    if current.is_recording():
        current.set_attributes({"gen_ai.usage.input_tokens": input_tokens,
                                "gen_ai.usage.output_tokens": output_tokens,
                                "docmind.usage.estimated": estimated})
