"""OpenTelemetry tracing: set up from the standard OTEL_* variables, off unless an endpoint is set.

With `OTEL_EXPORTER_OTLP_ENDPOINT` unset nothing is installed: the API's no-op tracer makes
every span helper below nearly free and no trace id exists. With it set, an SDK tracer
provider exports over OTLP (http/protobuf), and the exporter reads the other OTEL_* variables
(headers, timeout, protocol paths) itself.
"""
from __future__ import annotations

import contextlib
import contextvars
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from functools import wraps
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, Span, SpanContext, Status, StatusCode

log = logging.getLogger(__name__)

TRACER_NAME = "docmind"
_lock = threading.Lock()
_configured = False
# perf_counter → wall clock, for spans recorded after the fact from a stage's own timer.
_EPOCH_OFFSET_NS = time.time_ns() - time.perf_counter_ns()

def tracing_requested(environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    if str(env.get("OTEL_SDK_DISABLED", "")).lower() == "true":
        return False
    return bool(env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))


def configure_tracing(environ: Mapping[str, str] | None = None) -> bool:
    """Install the SDK provider with an OTLP exporter when asked to; True when tracing is on."""
    global _configured
    with _lock:
        if _configured:
            return True
        if not tracing_requested(environ):
            return False
        # heavy: the OpenTelemetry SDK and OTLP exporter (about 0.1 s) load only when tracing is asked for
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import OTELResourceDetector, Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        protocol = (os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or
                    os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf")
        if protocol != "http/protobuf":
            # Only the http/protobuf exporter ships (every OTLP backend accepts it); say so rather than hang.
            log.warning("OTEL_EXPORTER_OTLP_PROTOCOL=%s is not supported; exporting with http/protobuf", protocol)
        # OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES win over the default name.
        resource = Resource.create({"service.name": "docmind"}).merge(OTELResourceDetector().detect())
        provider = TracerProvider(resource=resource)
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(provider)
        _configured = True
        log.info("OpenTelemetry tracing on: OTLP export to %s",
                 os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"))
        return True


_tracer_cache: tuple[object, trace.Tracer] | None = None


def tracer() -> trace.Tracer:
    """The tracer of the current global provider, built once per provider: the SDK's get_tracer
    costs more than the span itself (it was a third of the tracing overhead per turn)."""
    global _tracer_cache
    provider = trace.get_tracer_provider()
    cached = _tracer_cache
    if cached is None or cached[0] is not provider:
        cached = _tracer_cache = (provider, provider.get_tracer(TRACER_NAME))
    return cached[1]


@contextlib.contextmanager
def span(name: str, attributes: Mapping[str, Any] | None = None) -> Iterator[Span]:
    """A child of the current span for one stage; an exception marks it as an error and propagates."""
    with tracer().start_as_current_span(name, attributes=_clean(attributes), record_exception=True,
                                        set_status_on_exception=True) as current:
        yield current


def traced[**P, R](name: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorator form of `span` for a stage function or method."""
    def decorate(func: Callable[P, R]) -> Callable[P, R]:
        @wraps(func)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            with span(name):
                return func(*args, **kwargs)
        return wrapper
    return decorate


def record_span(name: str, started_perf: float, ended_perf: float | None = None,
                attributes: Mapping[str, Any] | None = None) -> None:
    """A span for work already timed with perf_counter (the retrieval stages keep their own clock)."""
    current = trace.get_current_span()
    if not current.is_recording():
        return
    end = time.perf_counter() if ended_perf is None else ended_perf
    child = tracer().start_span(name, attributes=_clean(attributes),
                                start_time=_EPOCH_OFFSET_NS + int(started_perf * 1e9))
    child.end(end_time=_EPOCH_OFFSET_NS + int(end * 1e9))


def set_attributes(attributes: Mapping[str, Any]) -> None:
    current = trace.get_current_span()
    if current.is_recording():
        current.set_attributes(_clean(attributes))


def add_event(name: str, attributes: Mapping[str, Any] | None = None) -> None:
    current = trace.get_current_span()
    if current.is_recording():
        current.add_event(name, attributes=_clean(attributes))


def mark_error(message: str) -> None:
    current = trace.get_current_span()
    if current.is_recording():
        current.set_status(Status(StatusCode.ERROR, message))


def current_span_context() -> SpanContext | None:
    """The current span's identity, to carry to work that runs later on another thread (or None)."""
    ctx = trace.get_current_span().get_span_context()
    return ctx if ctx.is_valid else None


@contextlib.contextmanager
def follow_up_span(name: str, parent: SpanContext | None,
                   attributes: Mapping[str, Any] | None = None) -> Iterator[Span]:
    """A span for work a request started but did not wait for (memory extraction after `done`): a child
    of `parent` in the same trace, even when it runs after the parent ended, instead of a trace of its own
    that nobody can tie back to its turn."""
    context = trace.set_span_in_context(NonRecordingSpan(parent)) if parent is not None else None
    with tracer().start_as_current_span(name, context=context, attributes=_clean(attributes),
                                        record_exception=True, set_status_on_exception=True) as current:
        yield current


class TraceIdSink:
    """Where a turn's trace id is reported for a caller outside the turn's thread (the turn runner, which
    ends a stream that overran its deadline with an `error` event that should name the trace too)."""

    def __init__(self) -> None:
        self.value = ""


_trace_sink: contextvars.ContextVar[TraceIdSink | None] = contextvars.ContextVar("docmind_trace_sink", default=None)


@contextlib.contextmanager
def reporting_trace_id(sink: TraceIdSink) -> Iterator[TraceIdSink]:
    token = _trace_sink.set(sink)
    try:
        yield sink
    finally:
        _trace_sink.reset(token)


def report_trace_id(trace_id: str) -> None:
    sink = _trace_sink.get()
    if sink is not None and trace_id:
        sink.value = trace_id


def current_trace_id() -> str:
    """The 32-hex trace id of the current span, or "" when tracing is off."""
    ctx = trace.get_current_span().get_span_context()
    return format(ctx.trace_id, "032x") if ctx.is_valid else ""


def in_context[**P, R](func: Callable[P, R]) -> Callable[P, R]:
    """`func` bound to the caller's context, so a span started on a helper thread has the right parent."""
    ctx = contextvars.copy_context()

    @wraps(func)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        return ctx.copy().run(func, *args, **kwargs)
    return run


def _clean(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    """OTel accepts str/bool/int/float (and lists of them); anything else is shown as text."""
    if not attributes:
        return {}
    out: dict[str, Any] = {}
    for key, value in attributes.items():
        if value is None:
            continue
        if isinstance(value, str | bool | int | float):
            out[key] = value
        elif isinstance(value, list | tuple) and all(isinstance(v, str | bool | int | float) for v in value):
            out[key] = list(value)
        else:
            out[key] = str(value)
    return out
