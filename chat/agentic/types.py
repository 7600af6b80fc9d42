"""Data of the agentic loop: tool outcomes, call records and the loop's result."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kb.retrieval.types import Evidence, ScoredChunk


class AgenticEmpty(RuntimeError):
    """The loop ended without any evidence: the caller answers with one-shot retrieval."""


class AgenticCancelled(RuntimeError):
    """The client left: the loop stopped between rounds or while waiting for a tool."""


@dataclass(frozen=True)
class ToolOutcome:
    """What one tool call produced: the text the model sees, and the chunks kept for finalize()."""

    text: str
    chunks: tuple[ScoredChunk, ...] = ()
    error: str = ""
    used_web: bool = False
    computation: dict[str, Any] | None = None  # SandboxResult.as_dict() plus the code, for code_exec
    filtered: int = 0  # chunks dropped because their document was already returned this turn


@dataclass(frozen=True)
class ToolCallRecord:
    round: int
    call_id: str
    name: str
    arguments: dict[str, Any] | str  # str when the model's JSON was malformed
    result_count: int = 0
    document_ids: tuple[int, ...] = ()
    filtered: int = 0
    error: str = ""
    duration_ms: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"round": self.round, "id": self.call_id, "name": self.name, "arguments": self.arguments,
                "result_count": self.result_count, "document_ids": list(self.document_ids),
                "filtered_already_retrieved": self.filtered, "error": self.error,
                "duration_ms": round(self.duration_ms, 1)}


@dataclass(frozen=True)
class AgenticResult:
    """The loop's evidence plus everything the trace and the stored log show.

    `tool_calls` and `computations` are JSON-ready (the chat log stores them as they are);
    computations are text blocks for the prompt's computations stream.
    """

    evidence: Evidence
    rounds: int
    stop_reason: str
    used_web: bool
    tool_calls: tuple[dict[str, Any], ...] = ()
    computations: tuple[str, ...] = ()
    trace: tuple[str, ...] = ()
    planner: str = "llm"  # "llm" or "offline"
    timings_ms: dict[str, float] = field(default_factory=dict)

    @property
    def kb_chunks(self) -> tuple[ScoredChunk, ...]:
        return self.evidence.kb_chunks

    @property
    def web_chunks(self) -> tuple[ScoredChunk, ...]:
        return self.evidence.web_chunks

    def as_dict(self) -> dict[str, Any]:
        return {"rounds": self.rounds, "stop_reason": self.stop_reason, "used_web": self.used_web,
                "planner": self.planner, "tool_calls": list(self.tool_calls),
                "kb_chunks": [c.chunk_id for c in self.kb_chunks], "web_chunks": [c.url for c in self.web_chunks],
                "grade": self.evidence.grade.as_dict(), "trace": list(self.trace), "timings_ms": self.timings_ms}
