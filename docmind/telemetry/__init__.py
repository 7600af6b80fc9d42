"""Observability: OpenTelemetry spans, token usage and cost per turn, Prometheus metrics."""
from docmind.telemetry.tracing import (
    TraceIdSink,
    add_event,
    configure_tracing,
    current_span_context,
    current_trace_id,
    follow_up_span,
    in_context,
    mark_error,
    record_span,
    report_trace_id,
    reporting_trace_id,
    set_attributes,
    span,
    traced,
)
from docmind.telemetry.usage import TurnUsage, record_usage, usage_scope

__all__ = ["TraceIdSink", "TurnUsage", "add_event", "configure_tracing", "current_span_context", "current_trace_id",
           "follow_up_span", "in_context", "mark_error", "record_span", "record_usage", "report_trace_id",
           "reporting_trace_id", "set_attributes", "span", "traced", "usage_scope"]
