"""`TurnRecord`: what one chat turn decided and found, typed while it runs and saved as its retrieval log."""
from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from chat.pipeline import payloads
from chat.types import Assessment, PathDecision, PromptParts, QueryClassification
from kb.retrieval.types import Evidence


@dataclass
class AgenticRecord:
    tool_calls: list[Any] = field(default_factory=list)
    used_web: bool = False
    trace: list[str] = field(default_factory=list)


@dataclass
class TurnRecord:
    """Filled stage by stage; `as_log()` is the one place that shapes the persisted JSON (and the trace
    panel of a reopened conversation reads the same keys)."""

    classification: QueryClassification | None = None
    route: PathDecision | None = None
    # Set instead of `route` when a non-knowledge scope was answered without retrieval.
    meta_scope: str = ""
    evidence: Evidence | None = None
    assessment: Assessment | None = None
    prompt: PromptParts | None = None
    sources: list[dict[str, Any]] = field(default_factory=list)
    extractive: bool | None = None
    kb_version: int | None = None
    cached_question: str | None = None
    agentic: AgenticRecord | None = None
    computations: list[Any] = field(default_factory=list)
    agentic_fallback: str = ""
    agentic_fallback_reason: str = ""
    report: dict[str, Any] = field(default_factory=dict)
    # The model's reply stopped at its token limit.
    truncated: bool = False
    # The turn's recalled long-term memories (memory.turn.TurnMemory).
    memory: Any = None
    # Tokens and cost per model (chat.pipeline.observe.usage_log) and the turn's trace id when tracing is on.
    usage: dict[str, Any] = field(default_factory=dict)
    trace_id: str = ""
    timings_ms: dict[str, float] = field(default_factory=dict)
    # The knowledge bases the turn searched (a review of an unanswered question goes to their editors).
    kb_ids: list[int] = field(default_factory=list)
    # The curated answer that answered the turn (pair id, author, date).
    curated: dict[str, Any] = field(default_factory=dict)

    @contextlib.contextmanager
    def timed(self, stage: str) -> Iterator[None]:
        """The stage's wall time in `timings_ms`, however it ends: a failed or stopped turn's log says where
        the time went."""
        started = time.monotonic()
        try:
            yield
        finally:
            self.timings_ms[stage] = round((time.monotonic() - started) * 1000, 1)

    def as_log(self) -> dict[str, Any]:
        log: dict[str, Any] = {"timings_ms": dict(self.timings_ms)}
        if self.classification is not None:
            log["classification"] = self.classification.as_dict()
        if self.meta_scope:
            log["route"] = {"mode": "META", "scope": self.meta_scope}
        elif self.route is not None:
            log["route"] = self.route.as_dict()
        if self.evidence is not None:
            log.update(payloads.evidence_log(self.evidence))
        if self.assessment is not None:
            log["assessment"] = self.assessment.as_dict()
        if self.prompt is not None:
            log["prompt"] = {"tokens": dict(self.prompt.tokens), "notes": list(self.prompt.notes),
                             "low_confidence": self.prompt.low_confidence}
        if self.sources:
            log["sources"] = self.sources
        if self.extractive is not None:
            log["extractive"] = self.extractive
        if self.kb_version is not None:
            log["kb_version"] = self.kb_version
        if self.cached_question is not None:
            log["cache"] = {"hit": True, "question": self.cached_question}
        if self.agentic is not None:
            log["agentic"] = {"tool_calls": list(self.agentic.tool_calls), "used_web": self.agentic.used_web,
                              "trace": list(self.agentic.trace)}
        if self.computations:
            log["computations"] = list(self.computations)
        if self.agentic_fallback:
            log["agentic_fallback"] = self.agentic_fallback
        if self.agentic_fallback_reason:
            log["agentic_fallback_reason"] = self.agentic_fallback_reason
        if self.memory is not None:
            log["memory"] = self.memory.as_log()
        if self.usage:
            log["usage"] = self.usage
        if self.trace_id:
            log["trace_id"] = self.trace_id
        if self.truncated:
            log["truncated"] = True
        if self.kb_ids:
            log["kb_ids"] = list(self.kb_ids)
        if self.curated:
            log["curated"] = dict(self.curated)
        if self.report:
            log["report"] = {k: v for k, v in self.report.items() if k != "citations"}
        return log
