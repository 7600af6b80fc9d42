"""`DocSearch` port of the search tools and `KbDocSearch`, its implementation over the KB retrievers."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from kb.retrieval.gather import HybridGatherer
from kb.retrieval.ports import ChunkSearcher
from kb.retrieval.rrf import RrfFuser
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
    """B's hybrid gather + RRF for searchDocs, A's lexical search for keywordSearch."""

    def __init__(self, *, searcher: ChunkSearcher, embed_query: Callable[[str], np.ndarray], candidate_k: int = 30,
                 vector_weight: float = 1.0, bm25_weight: float = 1.0, rrf_k: int = 60,
                 on_worker_thread: Callable[[], None] | None = None) -> None:
        if candidate_k <= 0:
            raise ValueError("candidate_k must be positive")
        self._searcher = searcher
        self._gatherer = HybridGatherer(searcher=searcher, embed_query=embed_query, candidate_k=candidate_k,
                                        on_worker_thread=on_worker_thread)
        self._fuser = RrfFuser(weights={"vector": vector_weight, "bm25": bm25_weight}, rrf_k=rrf_k)

    def hybrid(self, query: str, *, k: int, domains: Sequence[str] | None = None) -> list[ScoredChunk]:
        gathered = self._gatherer.run(query=query, domains=domains or None)
        return list(self._fuser.run(lists={"vector": gathered.vector, "bm25": gathered.lexical})[:k])

    def lexical(self, query: str, *, k: int, domains: Sequence[str] | None = None) -> list[ScoredChunk]:
        hits = self._searcher.lexical_search(query, k=k, domains=domains or None)
        return [c.with_score("bm25", c.score) for c in hits]
