"""`MemoryRecaller`: a user's memories for one question — vector hits checked against the system of record,
plus the standing ones (profile, instructions, answer-style preferences)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime

import numpy as np

from memory.similarity import SimilarityScale
from memory.style import parse_answer_style
from memory.types import STANDING_TYPES, MemoryItem, MemoryStoreUnavailable, RecalledMemory, RecallResult
from memory.vectors import MemoryVectorIndex

# Hits of memories invalidated a moment ago may still be in the index: ask for a few more than k.
_OVERFETCH = 4


def is_standing(item: MemoryItem) -> bool:
    return item.memory_type in STANDING_TYPES or parse_answer_style([item.content]).applies


class MemoryRecaller:
    """Never resurrects a stale memory: a vector hit counts only if the database lists it as active.

    Only when the database is unreachable (`load_active` raises MemoryStoreUnavailable — an empty list
    means "no active memory", and then every hit is skipped) does it fall back to the index's
    truncated text, marked `from_index` and reported as degraded.
    """

    def __init__(self, *, embed_query: Callable[[str], np.ndarray], index: MemoryVectorIndex | None,
                 load_active: Callable[[int], Sequence[MemoryItem]], scale: SimilarityScale, top_k: int = 5,
                 min_score: float = 0.2, margin: float = 0.1, max_standing: int = 8) -> None:
        if top_k <= 0 or max_standing < 0 or margin < 0:
            raise ValueError("top_k must be positive, max_standing and margin not negative")
        self._embed_query, self._index, self._load_active = embed_query, index, load_active
        self.scale, self.top_k, self.min_score, self.max_standing = scale, top_k, min_score, max_standing
        self.margin = margin

    def run(self, *, user_id: int, query: str, include_standing: bool = True) -> RecallResult:
        trace: list[str] = []
        degraded: list[str] = []
        hits: list[tuple[int, float]] = []
        if self._index is not None and query.strip():
            try:
                hits = self._index.search(self._embed_query(query), user_id=user_id, k=self.top_k + _OVERFETCH)
            except Exception as exc:  # EmbeddingError / VectorStoreError: the database still gives standing ones
                degraded.append(f"vector recall failed: {exc.__class__.__name__}")
        try:
            # The user check is belt and braces: a loader bug must not leak another user's memories.
            active = {m.id: m for m in self._load_active(user_id) if m.user_id == user_id}
        except MemoryStoreUnavailable:
            return self._from_index(user_id, hits, degraded)
        relevant: list[RecalledMemory] = []
        stale = 0
        best: float | None = None
        for memory_id, cos in hits:  # best first
            item = active.get(memory_id)
            if item is None:
                stale += 1
                continue
            score = self.scale.query(cos)
            best = score if best is None else best
            # Relative to the best match too: a question about one thing should not pull in everything.
            if score >= self.min_score and score >= best - self.margin and len(relevant) < self.top_k:
                relevant.append(RecalledMemory(item=item, score=round(score, 4)))
        if stale:
            trace.append(f"{stale} vector hit(s) skipped: not active in the database")
        picked = {m.item.id for m in relevant}
        standing = []
        if include_standing:
            standing = [RecalledMemory(item=m, score=None) for m in active.values()
                        if m.id not in picked and is_standing(m)][: self.max_standing]
        trace.append(f"recalled {len(relevant)} relevant + {len(standing)} standing of {len(active)} active")
        return RecallResult(memories=(*standing, *relevant), degraded="; ".join(degraded), trace=tuple(trace))

    def _from_index(self, user_id: int, hits: list[tuple[int, float]], degraded: list[str]) -> RecallResult:
        degraded.append("database unreachable: truncated text from the vector index")
        texts: dict[int, tuple[int, str, str]] = {}
        if self._index is not None and hits:
            try:
                texts = self._index.texts([pk for pk, _ in hits])
            except Exception as exc:
                degraded.append(f"vector index text failed: {exc.__class__.__name__}")

        out = []
        for memory_id, cos in hits:
            found = texts.get(memory_id)
            score = self.scale.query(cos)
            if found is None or found[0] != user_id or score < self.min_score:
                continue
            item = MemoryItem(id=memory_id, user_id=user_id, memory_type=found[1], content=found[2],
                              access_count=0, created_at=datetime.now(UTC))
            out.append(RecalledMemory(item=item, score=round(score, 4), from_index=True))
        return RecallResult(memories=tuple(out[: self.top_k]), degraded="; ".join(degraded),
                            trace=(f"fallback: {len(out)} memory(ies) from the index",))
