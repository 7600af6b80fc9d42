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
    # Which tier decided ("meta-rules", "llm", "heuristic"): for the trace, not one of the classification fields.
    source: str = "heuristic"
    # What the rewrite filled in from the conversation ("它 → 乍都节公园"), for the trace.
    resolved: tuple[str, ...] = ()
    # The message refers to something ("此品牌", "其…") that neither it nor the conversation names.
    unresolved_reference: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "rewritten": self.rewritten,
            "intent": self.intent.value,
            "complexity": self.complexity.value,
            "specificity": self.specificity.value,
            "time_aware": self.time_aware,
            "memory_aware": self.memory_aware,
            "is_ambiguous": self.is_ambiguous,
            "scope": self.scope.value,
            "scope_confidence": round(self.scope_confidence, 4),
            "memory_write_hints": list(self.memory_write_hints),
        }


@dataclass(frozen=True)
class SourceRef:
    """A document an earlier answer cited."""

    document_id: int | None
    title: str


@dataclass(frozen=True)
class PreviousTurn:
    """The last answered turn of a conversation, as a follow-up question may refer to it."""

    question: str
    # The standalone question the turn was answered as ("" when none was recorded).
    rewritten: str
    answer: str
    # Cited documents, the most cited first.
    sources: tuple[SourceRef, ...] = ()
    # Section headings of the first source's document, in reading order ("第二类" may mean the second).
    sections: tuple[str, ...] = ()


@dataclass(frozen=True)
class ConversationContext:
    """What understanding may use to make a follow-up standalone; empty for a first question."""

    previous: PreviousTurn | None = None

    @property
    def is_empty(self) -> bool:
        return self.previous is None


@dataclass(frozen=True)
class Rewrite:
    """A standalone question. `resolved` lists what was filled in ("它 → 乍都节公园"), for the trace."""

    text: str
    resolved: tuple[str, ...] = ()
    # The message refers back (pronoun, ordinal, ellipsis) whether or not the reference was resolved.
    leans_back: bool = False


class AnswerShape(StrEnum):
    """How the answer is laid out; chosen from the intent and the route, followed by both answerers."""

    FACTS = "FACTS"
    COMPARISON = "COMPARISON"
    STEPS = "STEPS"
    SUMMARY = "SUMMARY"


class Verdict(StrEnum):
    """What the evidence allows: answer, answer with the low-relevance label, or say it is not there."""

    ANSWER = "ANSWER"
    LOW = "LOW"
    ABSTAIN = "ABSTAIN"


@dataclass(frozen=True)
class Assessment:
    """The calibrated probability that the evidence answers the question, and the signals behind it."""

    score: float
    verdict: Verdict
    features: Mapping[str, float] = field(default_factory=dict)
    # Words the question asks about that the evidence never says (`chat.confidence.unsaid_words`): why it is LOW.
    unsaid: tuple[str, ...] = ()

    @property
    def no_evidence(self) -> bool:
        return self.verdict is Verdict.ABSTAIN

    @property
    def low_confidence(self) -> bool:
        return self.verdict is Verdict.LOW

    def as_dict(self) -> dict[str, Any]:
        return {"score": round(self.score, 4), "verdict": self.verdict.value,
                "features": {k: round(v, 4) for k, v in self.features.items()}}


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
        return {"mode": self.mode.value, "reason": self.reason, "fallback_note": self.fallback_note}


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
    # Words of the question the evidence never says: the offline answer's low-relevance label names them.
    unsaid: tuple[str, ...] = ()


@dataclass(frozen=True)
class Citation:
    index: int
    chunk_id: str
    document_id: int | None
    document_title: str
    source: str = "KB"
    url: str | None = None
    # Where the cited passage is in the original (page and boxes, sheet and rows, slide); None where unknown.
    location: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "chunk_id": self.chunk_id,
            "document_id": self.document_id,
            "document_title": self.document_title,
            "source": self.source,
            "url": self.url,
            "location": self.location,
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
            "citation_coverage": None if self.citation_coverage is None else round(self.citation_coverage, 4),
            "invalid_refs": list(self.invalid_refs),
            "confidence_score": round(self.confidence_score, 4),
            "confidence_band": self.confidence_band,
            "ungrounded": self.ungrounded,
        }
