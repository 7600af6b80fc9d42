"""RrfFuser: weighted reciprocal-rank fusion with a k that adapts to the length of the lists."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType

from kb.retrieval.types import ScoredChunk

MIN_K = 10


class RrfFuser:
    """score(d) = Σ_lists w_list / (k + rank_list(d)), rank from 1.

    Adaptive k: k = min(rrf_k, max(MIN_K, n)), n = the longest input list. With the textbook
    k = 60 and lists of 10, rank 1 and rank 10 differ by only 13 %, so fusion degenerates into
    vote counting; tying k to the list length keeps the head of each list meaningful, and the
    floor of 10 stops one list's rank 1 from drowning everything when lists are tiny.
    """

    def __init__(self, *, weights: Mapping[str, float], rrf_k: int = 60) -> None:
        if rrf_k <= 0:
            raise ValueError("rrf_k must be positive")
        if any(w < 0 for w in weights.values()):
            raise ValueError("RRF weights must not be negative")
        self._weights = dict(weights)
        self._rrf_k = rrf_k

    def effective_k(self, longest: int) -> int:
        return min(self._rrf_k, max(MIN_K, longest))

    def run(self, *, lists: Mapping[str, Sequence[ScoredChunk]]) -> tuple[ScoredChunk, ...]:
        longest = max((len(items) for items in lists.values()), default=0)
        if longest == 0:
            return ()
        k = self.effective_k(longest)
        scores: dict[str, float] = {}
        best_rank: dict[str, int] = {}
        first: dict[str, ScoredChunk] = {}
        stage_scores: dict[str, dict[str, float]] = {}
        for name, items in lists.items():
            weight = self._weights.get(name, 1.0)
            for rank, chunk in enumerate(items, start=1):
                key = chunk.dedupe_key()
                first.setdefault(key, chunk)
                # Keep every list's own score (vector, bm25) for the reranker and the trace.
                for stage, value in chunk.stage_scores.items():
                    stage_scores.setdefault(key, {}).setdefault(stage, value)
                best_rank[key] = min(best_rank.get(key, rank), rank)
                scores[key] = scores.get(key, 0.0) + weight / (k + rank)
        # Ties: better best rank first, then id, so the order never depends on dict iteration.
        order = sorted(scores, key=lambda key: (-scores[key], best_rank[key], first[key].chunk_id))
        return tuple(
            replace(first[key], stage_scores=MappingProxyType(stage_scores.get(key, {}))).with_score("rrf", scores[key])
            for key in order
        )
