"""Data passed between the chat stages; stages return changed copies, never mutate their inputs."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from kb.retrieval.types import ScoredChunk
from memory.style import AnswerStyle


class Intent(StrEnum):
    FACTUAL = "FACTUAL"
    HOW_TO = "HOW_TO"
    EXPLANATION = "EXPLANATION"
    COMPARISON = "COMPARISON"
    SUMMARY = "SUMMARY"
    CHITCHAT = "CHITCHAT"
    OTHER = "OTHER"


class Complexity(StrEnum):
    SIMPLE = "SIMPLE"
    MEDIUM = "MEDIUM"
    COMPLEX = "COMPLEX"

    @property
    def rank(self) -> int:
        return _COMPLEXITY_RANK[self]

    def at_least(self, other: Complexity) -> Complexity:
        """The higher of the two: deterministic signals may only raise complexity."""
        return self if self.rank >= other.rank else other


_COMPLEXITY_RANK = {Complexity.SIMPLE: 0, Complexity.MEDIUM: 1, Complexity.COMPLEX: 2}


class Specificity(StrEnum):
    SPECIFIC = "SPECIFIC"
    BROAD = "BROAD"
    VAGUE = "VAGUE"


class Scope(StrEnum):
    """The six scopes; everything but KNOWLEDGE is answered without retrieval."""

    KNOWLEDGE = "KNOWLEDGE"
    GREETING = "GREETING"
    IDENTITY = "IDENTITY"  # who are you / help
    KB_META = "KB_META"  # what documents do you have
    MEMORY = "MEMORY"  # what do you remember about me
    OUT_OF_SCOPE = "OUT_OF_SCOPE"

    @property
    def needs_retrieval(self) -> bool:
        return self is Scope.KNOWLEDGE


@dataclass(frozen=True)
class QueryClassification:
    rewritten: str
    intent: Intent = Intent.FACTUAL
    complexity: Complexity = Complexity.SIMPLE
    specificity: Specificity = Specificity.SPECIFIC
    time_aware: bool = False
    memory_aware: bool = False
    is_ambiguous: bool = False
    scope: Scope = Scope.KNOWLEDGE
    scope_confidence: float = 1.0
    memory_write_hints: tuple[str, ...] = ()
    # Which tier decided ("meta-rules", "llm", "heuristic"): for the trace, not part of the seed's 10.
    source: str = "heuristic"

    def as_dict(self) -> dict[str, Any]:
        return {
            "rewritten": self.rewritten,
            "intent": self.intent.value,
            "complexity": self.complexity.value,
            "specificity": self.specificity.value,
            "timeAware": self.time_aware,
            "memoryAware": self.memory_aware,
            "isAmbiguous": self.is_ambiguous,
            "scope": self.scope.value,
            "scopeConfidence": round(self.scope_confidence, 4),
            "memoryWriteHints": list(self.memory_write_hints),
        }


class Mode(StrEnum):
    SELECTED_DOC = "SELECTED_DOC"
    RULE_PLANNER = "RULE_PLANNER"
    AGENTIC = "AGENTIC"


@dataclass(frozen=True)
class PathDecision:
    mode: Mode
    reason: str
    fallback_note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"mode": self.mode.value, "reason": self.reason, "fallbackNote": self.fallback_note}


@dataclass(frozen=True)
class PromptParts:
    """A prompt ready for `ChatModel`; evidence `[n]` in the prompt is `chunks[n - 1]`."""

    messages: list[dict]
    chunks: tuple[ScoredChunk, ...] = ()
    low_confidence: bool = False
    # Estimated tokens per stream (fixed, chunks, computations, memory, history, total).
    tokens: Mapping[str, int] = field(default_factory=dict)
    # What the budget layer did, for the trace ("history summarised", "computation #2 dropped"…).
    notes: tuple[str, ...] = ()
    # Remembered answer-style preferences (language, brevity) the offline answerer applies and names.
    answer_style: AnswerStyle | None = None
    # Remembered facts that bear on a memory-aware question ("根据我的情况…").
    memory_applied: tuple[str, ...] = ()


@dataclass(frozen=True)
class Citation:
    index: int
    chunk_id: str
    document_id: int | None
    document_title: str
    source: str = "KB"
    url: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "chunk_id": self.chunk_id,
            "document_id": self.document_id,
            "document_title": self.document_title,
            "source": self.source,
            "url": self.url,
        }


@dataclass(frozen=True)
class CitationReport:
    citations: tuple[Citation, ...]
    citation_coverage: float | None
    invalid_refs: list[int]
    confidence_score: float
    confidence_band: str
    ungrounded: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "citations": [c.as_dict() for c in self.citations],
            "citationCoverage": None if self.citation_coverage is None else round(self.citation_coverage, 4),
            "invalidRefs": list(self.invalid_refs),
            "confidenceScore": round(self.confidence_score, 4),
            "confidenceBand": self.confidence_band,
            "ungrounded": self.ungrounded,
        }
