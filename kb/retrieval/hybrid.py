"""HybridSearch: vector search ∥ BM25, fused by weighted RRF; the one hybrid search of every retrieval path."""
from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field

import numpy as np

from docmind.telemetry import record_span
from kb.retrieval.gather import HybridGatherer
from kb.retrieval.ports import ChunkSearcher
from kb.retrieval.rrf import RrfFuser
from kb.retrieval.types import ScoredChunk


@dataclass(frozen=True)
class HybridResult:
    chunks: tuple[ScoredChunk, ...]  # fused, best first
    vector_count: int
    lexical_count: int
    query_vector: np.ndarray | None
    timings_ms: Mapping[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


class HybridSearch:
    """The one-shot retriever, the agentic searchDocs tool and the retrieve API all search through this.

    `run` raises RetrievalFailed only when both retrievers fail; one failing is a note.
    """

    def __init__(self, *, searcher: ChunkSearcher, embed_query: Callable[[str], np.ndarray], candidate_k: int,
                 vector_weight: float = 1.0, bm25_weight: float = 1.0, rrf_k: int = 60,
                 executor: Executor | None = None, on_worker_thread: Callable[[], None] | None = None) -> None:
        if candidate_k <= 0:
            raise ValueError("candidate_k must be positive")
        self._searcher = searcher
        self._embed_query = embed_query
        self._candidate_k = candidate_k
        self._executor = executor
        self._on_worker_thread = on_worker_thread
        self._fuser = RrfFuser(weights={"vector": vector_weight, "bm25": bm25_weight}, rrf_k=rrf_k)

    def run(self, *, query: str, candidate_k: int | None = None, domains: Sequence[str] | None = None,
            document_ids: Sequence[int] | None = None) -> HybridResult:
        """`candidate_k` (per retriever) defaults to the constructor's; a caller asking for more passes more."""
        gatherer = HybridGatherer(searcher=self._searcher, embed_query=self._embed_query,
                                  candidate_k=candidate_k or self._candidate_k, executor=self._executor,
                                  on_worker_thread=self._on_worker_thread)
        gathered = gatherer.run(query=query, domains=domains, document_ids=document_ids)
        start = time.perf_counter()
        fused = self._fuser.run(lists={"vector": gathered.vector, "bm25": gathered.lexical})
        record_span("retrieval.rrf", start)
        return HybridResult(chunks=tuple(fused), vector_count=len(gathered.vector),
                            lexical_count=len(gathered.lexical), query_vector=gathered.query_vector,
                            timings_ms={**gathered.timings_ms, "rrf": round((time.perf_counter() - start) * 1000, 2)},
                            notes=gathered.notes)
