"""A span per model call with the OpenTelemetry GenAI semantic conventions, and its token usage."""
from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

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
    finish_reason: str = ""
    input_tokens: int | None = None
    output_tokens: int | None = None
    output_text: list[str] = field(default_factory=list)

    def usage(self, *, input_tokens: int | None, output_tokens: int | None) -> None:
        self.input_tokens, self.output_tokens = input_tokens, output_tokens


@contextlib.contextmanager
def model_call(*, operation: str, model: str, messages: list[dict], temperature: float | None = None,
               max_tokens: int | None = None, provider: str = "openai") -> Iterator[ModelCall]:
    attributes: dict[str, Any] = {"gen_ai.operation.name": operation, "gen_ai.provider.name": provider,
                                  "gen_ai.system": provider, "gen_ai.request.model": model}
    if temperature is not None:
        attributes["gen_ai.request.temperature"] = temperature
    if max_tokens is not None:
        attributes["gen_ai.request.max_tokens"] = max_tokens
    call = ModelCall(model=model, messages=messages)
    started = time.perf_counter()
    with tracer().start_as_current_span(f"{operation} {model}", attributes=attributes, record_exception=True,
                                        set_status_on_exception=True) as current:
        try:
            yield call
        except Exception as exc:
            metrics.LLM_ERRORS.labels(kind=type(exc).__name__).inc()
            current.set_attribute("error.type", type(exc).__name__)
            raise
        finally:
            estimated = call.input_tokens is None or call.output_tokens is None
            input_tokens = call.input_tokens if call.input_tokens is not None else estimate_messages(messages)
            output_tokens = (call.output_tokens if call.output_tokens is not None
                             else estimate_tokens("".join(call.output_text)))
            record_usage(model=model, input_tokens=input_tokens, output_tokens=output_tokens, estimated=estimated)
            metrics.LLM_TOKENS.labels(model=model, direction="input").inc(input_tokens)
            metrics.LLM_TOKENS.labels(model=model, direction="output").inc(output_tokens)
            metrics.LLM_SECONDS.labels(model=model, operation=operation).observe(time.perf_counter() - started)
            if current.is_recording():
                current.set_attributes({"gen_ai.usage.input_tokens": input_tokens,
                                        "gen_ai.usage.output_tokens": output_tokens,
                                        "docmind.usage.estimated": estimated})
                if call.response_model:
                    current.set_attribute("gen_ai.response.model", call.response_model)
                if call.finish_reason:
                    current.set_attribute("gen_ai.response.finish_reasons", [call.finish_reason])
