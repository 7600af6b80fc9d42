"""Data passed between retrieval stages; stages return changed copies, never mutate their inputs."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from docmind.evidence import ScoredChunk, Source

# ScoredChunk and Source are infrastructure types (rerankers and web search produce them); the stages use them here.
__all__ = ["Evidence", "Grade", "GradeResult", "ScoredChunk", "Source"]


class Grade(StrEnum):
    HIGH = "HIGH"
    AMBIGUOUS = "AMBIGUOUS"
    LOW = "LOW"


@dataclass(frozen=True)
class GradeResult:
    grade: Grade
    rerank_top1: float
    lex_coverage: float
    kb_entity_weak: bool
    web_compensation_needed: bool
    reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "grade": self.grade.value,
            "rerank_top1": round(self.rerank_top1, 4),
            "lex_coverage": round(self.lex_coverage, 4),
            "kb_entity_weak": self.kb_entity_weak,
            "web_compensation_needed": self.web_compensation_needed,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Evidence:
    """What the answer step sees: compressed chunks, their grade, and how long each stage took."""

    chunks: tuple[ScoredChunk, ...]
    grade: GradeResult
    timings_ms: Mapping[str, float] = field(default_factory=dict)
    trace: tuple[str, ...] = ()

    @property
    def needs_fallback(self) -> bool:
        # Only "no evidence at all": weak evidence still beats none, so LOW-but-present evidence is still cited.
        return not self.chunks

    @property
    def kb_chunks(self) -> tuple[ScoredChunk, ...]:
        return tuple(c for c in self.chunks if c.source == Source.KB)

    @property
    def web_chunks(self) -> tuple[ScoredChunk, ...]:
        return tuple(c for c in self.chunks if c.source == Source.WEB)
