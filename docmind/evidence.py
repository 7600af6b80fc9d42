"""ScoredChunk and Source: one piece of evidence as every layer passes it (retrieval, rerank, web search, chat)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from types import MappingProxyType
from typing import Any


class Source(StrEnum):
    KB = "KB"
    WEB = "WEB"
    MEMORY = "MEMORY"


@dataclass(frozen=True)
class ScoredChunk:
    """One piece of evidence. KB chunk ids are the Chunk primary key as text; web ids are URLs' hashes."""

    chunk_id: str
    content: str
    score: float
    source: Source = Source.KB
    document_id: int | None = None
    document_title: str = ""
    domain: str = ""
    parent_id: int | None = None
    # After parent expansion `content` is the parent's text; the child's own text is kept here
    # so that compression can centre its window on the passage that actually matched.
    child_content: str | None = None
    url: str | None = None
    # Document title › section path of a KB child: what the text is about, searched with it, quoted never.
    context: str = ""
    # Score of each stage that touched the chunk (vector, bm25, rrf, rerank…), for the trace.
    stage_scores: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))

    def dedupe_key(self) -> str:
        """Same key ⇔ same evidence: a parent reached from two children is one piece of evidence."""
        if self.source == Source.KB:
            return f"kb:{self.parent_id if self.parent_id is not None else self.chunk_id}"
        return f"{self.source.value.lower()}:{self.url or self.chunk_id}"

    def with_score(self, stage: str, score: float) -> ScoredChunk:
        """A copy scored by `stage`; the stage score becomes the current score."""
        scores = dict(self.stage_scores)
        scores[stage] = score
        return replace(self, score=score, stage_scores=MappingProxyType(scores))

    @property
    def searchable_text(self) -> str:
        """The text a query is matched against: the context line, then the content."""
        return f"{self.context}\n{self.content}" if self.context else self.content

    def as_dict(self) -> dict[str, Any]:
        return {
            "chunk_id": self.chunk_id,
            "context": self.context,
            "document_id": self.document_id,
            "document_title": self.document_title,
            "domain": self.domain,
            "content": self.content,
            "score": round(float(self.score), 6),
            "source": self.source.value,
            "url": self.url,
        }


def unique_best(chunks: Sequence[ScoredChunk]) -> list[ScoredChunk]:
    """One copy per dedupe key, the best-scored one, in first-seen order (tool and web results overlap)."""
    best: dict[str, ScoredChunk] = {}
    for chunk in chunks:
        key = chunk.dedupe_key()
        if key not in best or chunk.score > best[key].score:
            best[key] = chunk
    return list(best.values())
