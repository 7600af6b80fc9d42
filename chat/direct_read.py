"""`DocumentDirectReader`: uniform sampling of one document's chunks for SELECTED_DOC (no retrieval)."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from docmind.evidence import EvidenceBudget
from docmind.tokens import estimate_tokens, truncate_to_tokens
from kb.retrieval.types import ScoredChunk

# Below this a sampled chunk says too little; fewer, longer samples read better.
MIN_TOKENS_PER_CHUNK = 80


class DocumentDirectReader:
    """Evenly spaced chunks from start to end (first and last always in), in document order, within the
    evidence budget (the prompt's), so that every sampled part reaches the prompt."""

    def __init__(self, *, max_chunks: int, budget: EvidenceBudget) -> None:
        if max_chunks <= 0:
            raise ValueError("max_chunks must be positive")
        self.max_chunks = max_chunks
        self.budget = budget

    def run(self, *, chunks: Sequence[ScoredChunk]) -> tuple[ScoredChunk, ...]:
        """`chunks` in document order (the caller loads them); returns the sample, trimmed to the budget."""
        if not chunks:
            return ()
        budget = self.budget
        k = min(self.max_chunks, len(chunks), max(1, budget.tokens // MIN_TOKENS_PER_CHUNK))
        picked = [chunks[i] for i in sample_indices(len(chunks), k)]
        if budget.cost(picked) <= budget.tokens:
            return tuple(picked)
        # Every sample keeps its header; the text left over is shared equally among them.
        room = budget.tokens - sum(budget.header_cost(i, c) for i, c in enumerate(picked, 1))
        share = max(0, room) // len(picked)
        trimmed = [c if estimate_tokens(c.content) <= share else
                   replace(c, content=truncate_to_tokens(c.content, share, keep="head")) for c in picked]
        return tuple(c for c in trimmed if c.content.strip())


def sample_indices(n: int, k: int) -> list[int]:
    """k distinct indices spread evenly over range(n), including 0 and n - 1 when k >= 2."""
    if k >= n:
        return list(range(n))
    if k == 1:
        return [0]
    return sorted({round(i * (n - 1) / (k - 1)) for i in range(k)})
