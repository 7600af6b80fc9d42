"""HybridGatherer: vector search and BM25 in parallel; one failing is noted, both failing raises."""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from docmind.telemetry import in_context, record_span
from kb.retrieval.ports import ChunkSearcher
from kb.retrieval.types import ScoredChunk

# One process-wide pool: a per-request pool would pay thread start-up on every query.
_POOL = ThreadPoolExecutor(max_workers=8, thread_name_prefix="retrieval")


def shared_pool() -> Executor:
    return _POOL


class RetrievalFailed(RuntimeError):
    """Neither retriever produced a result."""


@dataclass(frozen=True)
class GatherResult:
    vector: tuple[ScoredChunk, ...]
    lexical: tuple[ScoredChunk, ...]
    query_vector: np.ndarray | None
    timings_ms: dict[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 2)


def _stage(timings: dict[str, float], name: str, start: float) -> None:
    timings[name] = _ms(start)
    record_span(f"retrieval.{name}", start)


class HybridGatherer:
    """Runs "embed the query, then vector search" alongside BM25, so BM25 overlaps the embedding."""

    def __init__(self, *, searcher: ChunkSearcher, embed_query: Callable[[str], np.ndarray], candidate_k: int,
                 executor: Executor | None = None, on_worker_thread: Callable[[], None] | None = None) -> None:
        if candidate_k <= 0:
            raise ValueError("candidate_k must be positive")
        self._searcher = searcher
        self._embed_query = embed_query
        self._k = candidate_k
        self._executor = executor or _POOL
        # Run in the pool thread before and after BM25: pool threads outlive requests, so the composition
        # layer drops the thread's DB connection there instead of leaving it open while the thread idles.
        self._on_worker_thread = on_worker_thread

    def run(self, *, query: str, domains: Sequence[str] | None = None,
            document_ids: Sequence[int] | None = None) -> GatherResult:
        timings: dict[str, float] = {}

        def vector_branch() -> tuple[np.ndarray, list[ScoredChunk]]:
            start = time.perf_counter()
            vector = self._embed_query(query)
            _stage(timings, "embed", start)
            start = time.perf_counter()
            hits = self._searcher.vector_search(vector, k=self._k, domains=domains, document_ids=document_ids)
            _stage(timings, "vector", start)
            return vector, hits

        def lexical_branch() -> list[ScoredChunk]:
            if self._on_worker_thread is not None:
                self._on_worker_thread()
            try:
                start = time.perf_counter()
                hits = self._searcher.lexical_search(query, k=self._k, domains=domains, document_ids=document_ids)
                _stage(timings, "bm25", start)
                return hits
            finally:
                if self._on_worker_thread is not None:
                    self._on_worker_thread()

        lexical_future = self._executor.submit(in_context(lexical_branch))
        notes: list[str] = []
        query_vector: np.ndarray | None = None
        vector_hits: list[ScoredChunk] = []
        lexical_hits: list[ScoredChunk] = []
        vector_error: Exception | None = None
        try:
            query_vector, vector_hits = vector_branch()  # in this thread: no hand-off for the slower branch
        except Exception as exc:  # a broken retriever must not take the other one down
            vector_error = exc
            notes.append(f"vector retriever failed: {exc.__class__.__name__}: {exc}")
        try:
            lexical_hits = lexical_future.result()
        except Exception as exc:
            notes.append(f"bm25 retriever failed: {exc.__class__.__name__}: {exc}")
            if vector_error is not None:
                raise RetrievalFailed(f"both retrievers failed: vector: {vector_error}; bm25: {exc}") from exc
        return GatherResult(
            vector=tuple(c.with_score("vector", c.score) for c in vector_hits),
            lexical=tuple(c.with_score("bm25", c.score) for c in lexical_hits),
            query_vector=query_vector, timings_ms=timings, notes=tuple(notes),
        )
