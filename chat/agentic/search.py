"""`DocSearch` port of the search tools and `KbDocSearch`, its implementation over the KB retrievers."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from kb.retrieval.hybrid import HybridSearch
from kb.retrieval.ports import ChunkSearcher
from kb.retrieval.types import ScoredChunk


class DocSearch(Protocol):
    """Knowledge-base search for the loop's tools.

    `hybrid` fuses vector search and BM25 (searchDocs); `lexical` is BM25 only (keywordSearch).
    Both return at most `k` chunks, best first, and raise on a backend failure (the loop then
    falls back to one-shot retrieval).
    """

    def hybrid(self, query: str, *, k: int, domains: Sequence[str] | None = None) -> list[ScoredChunk]: ...

    def lexical(self, query: str, *, k: int, domains: Sequence[str] | None = None) -> list[ScoredChunk]: ...


class KbDocSearch:
    """searchDocs runs the retrieval path's HybridSearch; keywordSearch runs BM25 alone."""

    def __init__(self, *, hybrid: HybridSearch, searcher: ChunkSearcher) -> None:
        self._hybrid = hybrid
        self._searcher = searcher

    def hybrid(self, query: str, *, k: int, domains: Sequence[str] | None = None) -> list[ScoredChunk]:
        return list(self._hybrid.run(query=query, domains=domains or None).chunks[:k])

    def lexical(self, query: str, *, k: int, domains: Sequence[str] | None = None) -> list[ScoredChunk]:
        hits = self._searcher.lexical_search(query, k=k, domains=domains or None)
        return [c.with_score("bm25", c.score) for c in hits]
