"""The turn's observability at its boundaries: root span and usage scope, then usage rows and metrics.

Kept apart from the orchestrator so that the pipeline reads as stages; everything here is a
no-op cost when tracing is off (the OTel API's no-op tracer) except the usage bookkeeping.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from chat import services
from docmind.telemetry import current_trace_id, mark_error, metrics, report_trace_id, span
from docmind.telemetry.usage import TurnUsage, current_usage, model_tiers, price_of, usage_scope


@contextlib.contextmanager
def turn_observed(turn: Any) -> Iterator[TurnUsage]:
    """One trace per chat turn; model calls anywhere inside report their tokens to this turn."""
    attributes = {"docmind.user_id": turn.user.pk, "docmind.conversation_id": turn.conversation.pk,
                  "docmind.question_id": turn.question_message.pk}
    with span("chat.turn", attributes), usage_scope(TurnUsage()) as usage:
        trace_id = current_trace_id()
        if trace_id:
            turn.record.trace_id = trace_id
            report_trace_id(trace_id)
        yield usage


def usage_log(snapshot: Any) -> dict[str, Any]:
    """The turn's usage as stored in the message log (tier and price resolved now)."""
    usage = current_usage()
    rows = [m.as_dict() for m in usage.models()] if usage is not None else []
    tiers, prices = model_tiers(snapshot), dict(snapshot["llm.price_per_1k_tokens"] or {})
    for row in rows:
        row["tier"] = tiers.get(row["model"], "other")
        row["cost"] = price_of(prices, model=row["model"], input_tokens=row["input_tokens"],
                               output_tokens=row["output_tokens"])
    costs = [r["cost"] for r in rows if r["cost"] is not None]
    return {"models": rows, "input_tokens": sum(r["input_tokens"] for r in rows),
            "output_tokens": sum(r["output_tokens"] for r in rows),
            "cost": round(sum(costs), 8) if costs else None}


def after_finish(turn: Any, saved: Any, status: str) -> None:
    """Usage rows for the admin's daily totals, and the turn's latencies for /metrics."""
    log = turn.record.as_log()
    rows = log.get("usage", {}).get("models", [])
    if rows:
        services.message_usage_record(message=saved, user=turn.user, usage=rows,
                                      tiers=model_tiers(turn.snapshot),
                                      prices=dict(turn.snapshot["llm.price_per_1k_tokens"] or {}))
    if status != "complete":
        mark_error(f"turn ended {status}")  # the root span: every stage span has closed by now
    route = log.get("route", {})
    path = "CACHE" if log.get("cache", {}).get("hit") else str(route.get("mode", "") or "none")
    metrics.observe_turn(path=path, outcome=status, timings_ms=log.get("timings_ms", {}))


def cache_lookup(hit: bool) -> None:
    metrics.CACHE_LOOKUPS.labels(result="hit" if hit else "miss").inc()
