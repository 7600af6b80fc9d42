"""`DocumentDirectReader`: uniform sampling of one document's chunks for SELECTED_DOC (no retrieval)."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from docmind.tokens import estimate_tokens, truncate_to_tokens
from kb.retrieval.types import ScoredChunk

# Below this a sampled chunk says too little; fewer, longer samples read better.
MIN_TOKENS_PER_CHUNK = 80


class DocumentDirectReader:
    """Evenly spaced chunks from start to end (first and last always in), in document order, within budget."""

    def __init__(self, *, max_chunks: int, budget_tokens: int) -> None:
        if max_chunks <= 0:
            raise ValueError("max_chunks must be positive")
        if budget_tokens <= 0:
            raise ValueError("budget_tokens must be positive")
        self.max_chunks = max_chunks
        self.budget_tokens = budget_tokens

    def run(self, *, chunks: Sequence[ScoredChunk]) -> tuple[ScoredChunk, ...]:
        """`chunks` in document order (the caller loads them); returns the sample, trimmed to the budget."""
        if not chunks:
            return ()
        k = min(self.max_chunks, len(chunks), max(1, self.budget_tokens // MIN_TOKENS_PER_CHUNK))
        picked = [chunks[i] for i in sample_indices(len(chunks), k)]
        if sum(estimate_tokens(c.content) for c in picked) <= self.budget_tokens:
            return tuple(picked)
        share = self.budget_tokens // len(picked)
        return tuple(c if estimate_tokens(c.content) <= share else
                     replace(c, content=truncate_to_tokens(c.content, share, keep="head")) for c in picked)


def sample_indices(n: int, k: int) -> list[int]:
    """k distinct indices spread evenly over range(n), including 0 and n - 1 when k >= 2."""
    if k >= n:
        return list(range(n))
    if k == 1:
        return [0]
    return sorted({round(i * (n - 1) / (k - 1)) for i in range(k)})
