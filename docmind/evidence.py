"""ScoredChunk and Source: one piece of evidence as every layer passes it (retrieval, rerank, web search, chat);
how the prompt renders it, and the evidence budget measured in that rendering."""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from docmind.tokens import estimate_tokens, pack_greedily

# The longest passage of a source card: the citation snippet, all an asker gets of a base it may ask but not read.
SNIPPET_CHARS = 600


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
    # After parent expansion: the other children of the same parent that retrieval returned (a table cut into
    # several children, a clause and its neighbour), so that compression keeps every passage that matched.
    sibling_contents: tuple[str, ...] = ()
    url: str | None = None
    # Document title › section path of a KB child: what the text is about, searched with it, quoted never.
    context: str = ""
    # Where a KB chunk is in its original file ({"page": 3, "boxes": […]}, {"sheet": …, "rows": […]},
    # {"slide": 3}); None where the format has no pages or the evidence is not from the KB.
    location: Mapping[str, Any] | None = None
    # After parent expansion: where the parent is, for a passage quoted from the parent beyond the child.
    parent_location: Mapping[str, Any] | None = None
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

    def snippet(self) -> str:
        """The passage that matched (the child's own text, not the parent it was expanded to), cut to the source
        card's length: what an asker who may not read the original receives of this evidence."""
        own = self.child_content if self.child_content is not None else self.content
        return own[:SNIPPET_CHARS]

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
            # `parts` (a chunk's stretch on each page it runs over) serve the citation, not the reader of the API.
            "location": None if self.location is None else {k: v for k, v in self.location.items() if k != "parts"},
        }


def unique_best(chunks: Sequence[ScoredChunk]) -> list[ScoredChunk]:
    """One copy per dedupe key, the best-scored one, in first-seen order (tool and web results overlap)."""
    best: dict[str, ScoredChunk] = {}
    for chunk in chunks:
        key = chunk.dedupe_key()
        if key not in best or chunk.score > best[key].score:
            best[key] = chunk
    return list(best.values())


# Between two evidence blocks in the prompt; every block is charged for one, the last included.
BLOCK_SEPARATOR = "\n\n"


def evidence_header(index: int, chunk: ScoredChunk) -> str:
    """The numbered line above a piece of evidence in the prompt; [index] is what a citation names."""
    title = chunk.document_title or (chunk.url or "未命名来源")
    parts = [f"[{index}] 《{title}》"]
    # The section path says what the passage is about; the title is already in the brackets.
    section = chunk.context.split("›", 1)[1].strip() if "›" in chunk.context else ""
    if section:
        parts.append(f"章节：{section}")
    if chunk.domain:
        parts.append(f"领域：{chunk.domain}")
    if chunk.source is Source.WEB:
        parts.append(f"网页：{chunk.url}" if chunk.url else "网页")
    return " · ".join(parts) + "\n"


def evidence_block(index: int, chunk: ScoredChunk, content: str | None = None) -> str:
    """One piece of evidence as the prompt shows it: header, then its text (or `content` in its place)."""
    return evidence_header(index, chunk) + (chunk.content if content is None else content).strip()


@dataclass(frozen=True)
class EvidenceBudget:
    """The evidence budget (`rag.context_max_tokens`), in one unit for every stage that applies it: estimated
    tokens of the evidence as the prompt renders it, i.e. each numbered block (header line and text) plus the
    separator after it. Retrieval packs its evidence with it, the direct read trims its sample to it and the
    prompt fits the evidence in it, so what retrieval returns within the budget reaches the prompt whole."""

    tokens: int = 3000

    def __post_init__(self) -> None:
        if self.tokens <= 0:
            raise ValueError("the evidence budget must be positive")

    @staticmethod
    def block_cost(index: int, chunk: ScoredChunk, content: str | None = None) -> int:
        """Tokens the chunk takes as block `index` (1-based) of the prompt's evidence."""
        return estimate_tokens(evidence_block(index, chunk, content) + BLOCK_SEPARATOR)

    @staticmethod
    def header_cost(index: int, chunk: ScoredChunk) -> int:
        """Tokens block `index` takes before any of its text."""
        return estimate_tokens(evidence_header(index, chunk) + BLOCK_SEPARATOR)

    def cost(self, chunks: Iterable[ScoredChunk]) -> int:
        """Tokens `chunks` take as the prompt's evidence, numbered from 1 in the order given."""
        return sum(self.block_cost(i, chunk) for i, chunk in enumerate(chunks, 1))

    def pack(self, chunks: Iterable[ScoredChunk], *, ceiling: int | None = None) -> tuple[list[ScoredChunk], int]:
        """Chunks in order while their blocks fit (a chunk that does not fit is skipped, never cut), numbered by
        their place among the kept ones, and the tokens they take; `ceiling` lowers the budget (what is left of
        a whole prompt)."""
        budget = self.tokens if ceiling is None else min(self.tokens, ceiling)
        return pack_greedily(chunks, budget, lambda chunk, kept: self.block_cost(kept + 1, chunk))
