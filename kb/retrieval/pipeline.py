"""OneShotRetriever: HybridSearch (embed → vector ∥ BM25 → RRF) → EvidenceFinisher (the RULE_PLANNER path)."""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from docmind.embeddings import Embedder
from docmind.foreground import foreground
from docmind.rerank import Reranker
from kb.retrieval.compress import ContextCompressor
from kb.retrieval.finisher import EvidenceFinisher
from kb.retrieval.grader import RetrievalGrader
from kb.retrieval.hybrid import HybridResult, HybridSearch
from kb.retrieval.hyde import HydeExpander
from kb.retrieval.mmr import MmrSelector
from kb.retrieval.params import RetrievalParams
from kb.retrieval.parents import ParentExpander
from kb.retrieval.ports import ChunkSearcher, ParentLookup, VectorLookup, WebSearcher
from kb.retrieval.rerank import RerankStage
from kb.retrieval.translate import QueryTranslator
from kb.retrieval.types import Evidence


class SearchBackend(ChunkSearcher, VectorLookup, ParentLookup, Protocol):
    """What kb.search.KbSearcher provides: chunk search plus stored vectors and parents."""


def build_finisher(*, params: RetrievalParams, searcher: VectorLookup | ParentLookup, embedder: Embedder | None,
                   reranker: Reranker, web: WebSearcher | None = None, top_k: int | None = None) -> EvidenceFinisher:
    """The shared tail, configured from `params` (the agentic finalize() builds it the same way)."""
    return EvidenceFinisher(
        rerank=RerankStage(reranker=reranker),
        mmr=MmrSelector(top_k=top_k or params.top_k, lambda_=params.mmr_lambda, similarity=params.mmr_similarity),
        parents=ParentExpander(parents=searcher),  # type: ignore[arg-type]
        compressor=ContextCompressor(budget=params.evidence, window_chars=params.window_chars,
                                     near_dup_jaccard=params.near_dup_jaccard),
        grader=RetrievalGrader(high_threshold=params.high_threshold, low_threshold=params.low_threshold,
                               mode=params.grader_mode, web_on_low=params.web_on_low,
                               web_on_ambiguous=params.web_on_ambiguous,
                               rescorer=lambda q, chunks: reranker.rerank(q, chunks)),
        vectors=searcher,  # type: ignore[arg-type]
        embedder=embedder, web=web, web_k=params.web_k,
    )


class OneShotRetriever:
    def __init__(self, *, searcher: SearchBackend, embedder: Embedder, reranker: Reranker,
                 params: RetrievalParams | None = None, web: WebSearcher | None = None,
                 hyde: HydeExpander | None = None, on_worker_thread: Callable[[], None] | None = None,
                 translator: QueryTranslator | None = None) -> None:
        self._searcher = searcher
        self._embedder = embedder
        self._reranker = reranker
        self._params = params or RetrievalParams()
        self._web = web
        # HyDE only when the flag is on and a writer was given (offline there is none).
        self._hyde = hyde if self._params.hyde_enabled else None
        self._hybrid = HybridSearch(searcher=searcher, embed_query=self._embed_query,
                                    candidate_k=self._params.candidate_k, vector_weight=self._params.vector_weight,
                                    bm25_weight=self._params.bm25_weight, rrf_k=self._params.rrf_k,
                                    on_worker_thread=on_worker_thread, translator=translator)

    @property
    def params(self) -> RetrievalParams:
        return self._params

    def run(self, *, query: str, top_k: int | None = None, domains: Sequence[str] | None = None,
            document_ids: Sequence[int] | None = None) -> Evidence:
        # one span for both stages: background threads resuming between them would hold up the second
        with foreground():
            begin = time.perf_counter()
            found, k = self._search(query, top_k, domains, document_ids, across=False)
            return self._finish(query, found, k, begin)

    def run_across(self, *, query: str, top_k: int | None = None, domains: Sequence[str] | None = None,
                   document_ids: Sequence[int] | None = None) -> Evidence | None:
        """The search again with the other language than the question's searched however much of the question its
        own language says (`HybridSearch.run`, `across`); None when that adds no passage in the other language:
        its evidence would be `run`'s, and ranking it again would cost the reranker's time for nothing."""
        with foreground():
            begin = time.perf_counter()
            found, k = self._search(query, top_k, domains, document_ids, across=True)
            return self._finish(query, found, k, begin) if found.searched_other_language else None

    def _search(self, query: str, top_k: int | None, domains: Sequence[str] | None,
                document_ids: Sequence[int] | None, *, across: bool) -> tuple[HybridResult, int]:
        """The fused candidates, and how many chunks the evidence keeps (`top_k`, else the configured one)."""
        if top_k is not None and top_k <= 0:
            raise ValueError("top_k must be positive")
        k = top_k or self._params.top_k
        found = self._hybrid.run(query=query, candidate_k=max(self._params.candidate_k, k), domains=domains,
                                 document_ids=document_ids, across=across)
        return found, k

    def _finish(self, query: str, found: HybridResult, k: int, begin: float) -> Evidence:
        timings = dict(found.timings_ms)
        trace = [*found.notes, f"candidates: vector {found.vector_count}, bm25 {found.lexical_count}, "
                               f"fused {len(found.chunks)}"]
        if self._hyde is not None and self._hyde.last_note:
            trace.append(self._hyde.last_note)
        finisher = build_finisher(params=self._params, searcher=self._searcher, embedder=self._embedder,
                                  reranker=self._reranker, web=self._web, top_k=k)
        evidence = finisher.run(query=query, candidates=found.chunks, query_vector=found.query_vector,
                                timings_ms=timings, trace=trace)
        total = round((time.perf_counter() - begin) * 1000, 2)
        return Evidence(chunks=evidence.chunks, grade=evidence.grade,
                        timings_ms={**evidence.timings_ms, "total": total}, trace=evidence.trace)

    def _embed_query(self, query: str) -> np.ndarray:
        if self._hyde is not None:
            return self._hyde.run(query=query)
        return self._embedder.embed_query(query)
