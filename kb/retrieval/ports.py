"""What the retrieval stages need from storage, as narrow protocols (implemented in kb.search)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from docmind.websearch import WebSearch
from kb.retrieval.types import ScoredChunk


class ChunkSearcher(Protocol):
    """Searches child chunks. Both methods return at most `k` chunks, best first, and raise
    on a backend failure (the caller decides whether one retriever failing is fatal)."""

    def vector_search(self, query_vector: np.ndarray, *, k: int,
                      domains: Sequence[str] | None = None,
                      document_ids: Sequence[int] | None = None) -> list[ScoredChunk]: ...

    def lexical_search(self, query: str, *, k: int,
                       domains: Sequence[str] | None = None,
                       document_ids: Sequence[int] | None = None) -> list[ScoredChunk]: ...


class VectorLookup(Protocol):
    """Stored embeddings of child chunks by id (for MMR cosine and the local reranker); ids
    without a stored vector are absent from the result."""

    def vectors_of(self, chunk_ids: Sequence[str]) -> dict[str, np.ndarray]: ...


class ParentLookup(Protocol):
    """Maps child chunk ids to their parent chunk (id, content[, location]); children without a parent are
    absent."""

    def parents_of(self, chunk_ids: Sequence[str]) -> dict[str, tuple]: ...


# The web search port is infrastructure's own protocol; the stages know it under this name.
WebSearcher = WebSearch
