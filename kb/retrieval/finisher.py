"""EvidenceFinisher: the tail shared by one-shot and agentic paths — rerank, MMR, parents, compression, grade."""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from docmind.embeddings import Embedder
from docmind.evidence import unique_best
from docmind.foreground import foreground
from docmind.telemetry import record_span
from kb.retrieval.compress import ContextCompressor
from kb.retrieval.grader import RetrievalGrader
from kb.retrieval.mmr import MmrSelector
from kb.retrieval.parents import ParentExpander
from kb.retrieval.ports import VectorLookup, WebSearcher
from kb.retrieval.rerank import RerankStage
from kb.retrieval.types import Evidence, ScoredChunk, Source


@dataclass
class _Clock:
    timings: dict[str, float] = field(default_factory=dict)
    trace: list[str] = field(default_factory=list)

    def time(self, name: str, start: float) -> None:
        # Stages run twice after web compensation: accumulate, the total is what the caller waited.
        self.timings[name] = round(self.timings.get(name, 0.0) + (time.perf_counter() - start) * 1000, 2)
        record_span(f"retrieval.{name}", start)


class EvidenceFinisher:
    """Candidates in (any mix of KB and web chunks), Evidence out.

    KB and web scores are not comparable, nor are scores from different tool calls, so the
    union is reranked once on one scale. When the grade asks for web compensation and a web
    searcher is configured, one web search is merged in and the tail runs once more.
    """

    def __init__(self, *, rerank: RerankStage, mmr: MmrSelector, parents: ParentExpander,
                 compressor: ContextCompressor, grader: RetrievalGrader, vectors: VectorLookup,
                 embedder: Embedder | None = None, web: WebSearcher | None = None, web_k: int = 5) -> None:
        if web_k <= 0:
            raise ValueError("web_k must be positive")
        self._rerank, self._mmr, self._parents = rerank, mmr, parents
        self._compressor, self._grader = compressor, grader
        self._vectors, self._embedder, self._web, self._web_k = vectors, embedder, web, web_k

    def run(self, *, query: str, candidates: Sequence[ScoredChunk], query_vector: np.ndarray | None = None,
            allow_web: bool = True, timings_ms: dict[str, float] | None = None,
            trace: Sequence[str] = ()) -> Evidence:
        """`allow_web=False` when the caller already searched the web (the agentic loop)."""
        clock = _Clock(dict(timings_ms or {}), list(trace))
        pool = unique_best(candidates)  # the one dedupe of every path's candidates (best score per key)
        if len(pool) < len(candidates):
            clock.trace.append(f"dedupe: {len(candidates)} → {len(pool)} unique")
        if query_vector is None and self._embedder is not None:
            start = time.perf_counter()
            try:
                query_vector = self._embedder.embed_query(query)
            except Exception as exc:  # the local reranker then works from term coverage alone
                clock.trace.append(f"query embedding failed: {exc}")
            clock.time("embed", start)
        with foreground():  # background threads of this process wait meanwhile (docmind.foreground)
            evidence = self._finish(query, pool, query_vector, clock)
        if evidence.grade.web_compensation_needed and allow_web and self._web is not None:
            start = time.perf_counter()
            try:
                web_chunks = self._web.search(query, k=self._web_k)
            except Exception as exc:  # no web is still an answer from the KB
                clock.trace.append(f"web compensation failed: {exc.__class__.__name__}: {exc}")
                web_chunks = []
            clock.time("web", start)
            if web_chunks:
                clock.trace.append(f"web compensation ({evidence.grade.grade.value}): {len(web_chunks)} results")
                return self._finish(query, unique_best([*pool, *web_chunks]), query_vector, clock)
            evidence = replace(evidence, timings_ms=dict(clock.timings), trace=tuple(clock.trace))
        return evidence

    def _finish(self, query: str, pool: list[ScoredChunk], query_vector: np.ndarray | None,
                clock: _Clock) -> Evidence:
        start = time.perf_counter()
        vectors = self._lookup_vectors(pool, clock)
        clock.time("vectors", start)
        start = time.perf_counter()
        reranked = self._rerank.run(query=query, chunks=pool, query_vector=query_vector, vectors=vectors)
        clock.time("rerank", start)
        start = time.perf_counter()
        selected = self._mmr.run(chunks=reranked.chunks, vectors=vectors)
        clock.time("mmr", start)
        start = time.perf_counter()
        expanded = self._parents.run(chunks=selected.chunks)
        clock.time("parents", start)
        start = time.perf_counter()
        compressed = self._compressor.run(query=query, chunks=expanded.chunks)
        clock.time("compress", start)
        start = time.perf_counter()
        grade = self._grader.run(query=query, chunks=compressed.chunks)
        clock.time("grade", start)
        for outcome in (reranked, selected, expanded, compressed):
            clock.trace.extend(outcome.notes)
        clock.trace.append(f"grade {grade.grade.value}: {grade.reason}")
        return Evidence(chunks=compressed.chunks, grade=grade, timings_ms=dict(clock.timings),
                        trace=tuple(clock.trace))

    def _lookup_vectors(self, pool: list[ScoredChunk], clock: _Clock) -> dict[str, np.ndarray]:
        """Stored vectors for KB chunks in one batch; web chunks (no stored vector) embedded in one call."""
        vectors: dict[str, np.ndarray] = {}
        kb_ids = [c.chunk_id for c in pool if c.source == Source.KB]
        if kb_ids:
            try:
                vectors.update(self._vectors.vectors_of(kb_ids))
            except Exception as exc:  # MMR falls back to Jaccard, the reranker to term coverage
                clock.trace.append(f"vector lookup failed: {exc.__class__.__name__}: {exc}")
        others = [c for c in pool if c.chunk_id not in vectors and c.source != Source.KB]
        if others and self._embedder is not None:
            try:
                matrix = self._embedder.embed_passages([c.content for c in others])
                vectors.update({c.chunk_id: matrix[i] for i, c in enumerate(others)})
            except Exception as exc:
                clock.trace.append(f"web chunk embedding failed: {exc}")
        return vectors
