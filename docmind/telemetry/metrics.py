"""Prometheus metrics of this process (requests, turns, stages, ingestion, cache, model calls).

Each server process keeps its own counters (prometheus_client's default registry): scrape
every worker, as usual for several processes behind one address. The ingestion queue depth
is read from the database at scrape time (project.telemetry.collectors), so any worker reports the shared queue.
"""
from __future__ import annotations

from collections.abc import Mapping

from prometheus_client import Counter, Histogram, disable_created_metrics

# `<name>_created` series (one per counter/histogram label set) only double the scrape: rate() never needs them.
disable_created_metrics()

# Seconds: a chat turn spans from a cached answer (tens of ms) to an agentic turn with a slow model.
_TURN_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120)
_STAGE_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30)

HTTP_REQUESTS = Counter("docmind_http_requests", "HTTP requests answered, by method and status class.",
                        ["method", "status"])
TURN_SECONDS = Histogram("docmind_chat_turn_seconds", "Chat turn latency, question to done, by answer path.",
                         ["path"], buckets=_TURN_BUCKETS)
STAGE_SECONDS = Histogram("docmind_chat_stage_seconds", "Latency of each chat pipeline stage.", ["stage"],
                          buckets=_STAGE_BUCKETS)
TURNS = Counter("docmind_chat_turns", "Chat turns finished, by answer path and outcome.", ["path", "outcome"])
CACHE_LOOKUPS = Counter("docmind_answer_cache_lookups", "Semantic answer cache lookups, by result.", ["result"])
LLM_ERRORS = Counter("docmind_llm_errors", "Failed model calls, by error kind (cancellations not included).",
                     ["kind"])
# A client that leaves mid-answer ends its model call: that is not the model failing.
LLM_CANCELLED = Counter("docmind_llm_cancelled", "Model calls ended because the client left or stopped the turn.",
                        ["model"])
LLM_TOKENS = Counter("docmind_llm_tokens", "Model tokens, by model and direction.", ["model", "direction"])
LLM_SECONDS = Histogram("docmind_llm_call_seconds", "Model call latency, by model and operation.",
                        ["model", "operation"], buckets=_TURN_BUCKETS)
INGESTED = Counter("docmind_ingestion_documents", "Documents processed by the ingestion worker, by outcome.",
                   ["outcome"])
INGEST_SECONDS = Histogram("docmind_ingestion_document_seconds", "Time to ingest one document.",
                           buckets=_TURN_BUCKETS)


def observe_turn(*, path: str, outcome: str, timings_ms: Mapping[str, float]) -> None:
    """One finished turn: its total latency per path and each stage the pipeline timed."""
    label = path or "unknown"
    TURNS.labels(path=label, outcome=outcome).inc()
    for stage, ms in timings_ms.items():
        if stage == "total":
            TURN_SECONDS.labels(path=label).observe(float(ms) / 1000)
        elif isinstance(ms, int | float):
            STAGE_SECONDS.labels(stage=stage).observe(float(ms) / 1000)
