"""RerankStage: scores candidates with the Reranker; on timeout or failure keeps the incoming (RRF) order."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import Executor
from concurrent.futures import TimeoutError as FutureTimeout

import numpy as np

from docmind.rerank import Reranker
from kb.retrieval.gather import shared_pool
from kb.retrieval.outcome import StageOutcome
from kb.retrieval.types import ScoredChunk


class RerankStage:
    def __init__(self, *, reranker: Reranker, timeout_s: float = 8.0, executor: Executor | None = None) -> None:
        if timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        self._reranker = reranker
        self._timeout = timeout_s
        self._executor = executor or shared_pool()

    def run(self, *, query: str, chunks: Sequence[ScoredChunk], query_vector: np.ndarray | None = None,
            vectors: Mapping[str, np.ndarray] | None = None) -> StageOutcome:
        if not chunks:
            return StageOutcome(())
        future = self._executor.submit(self._reranker.rerank, query, list(chunks),
                                       query_vector=query_vector, chunk_vectors=vectors)
        try:
            scores = future.result(timeout=self._timeout)
            if len(scores) != len(chunks):
                raise ValueError(f"reranker returned {len(scores)} scores for {len(chunks)} chunks")
        except FutureTimeout:
            future.cancel()
            return StageOutcome(tuple(chunks), (f"rerank timed out after {self._timeout}s; kept RRF order",))
        except Exception as exc:  # any reranker failure degrades to the fused order, never to an error
            return StageOutcome(tuple(chunks), (f"rerank failed ({exc.__class__.__name__}: {exc}); kept RRF order",))
        # Stable sort: equal rerank scores keep their fused order.
        ranked = sorted(range(len(chunks)), key=lambda i: -scores[i])
        return StageOutcome(tuple(chunks[i].with_score("rerank", float(scores[i])) for i in ranked))
