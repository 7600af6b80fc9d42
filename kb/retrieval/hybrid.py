"""HybridSearch: vector search ∥ BM25, fused by weighted RRF; the one hybrid search of every retrieval path."""
from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field, replace
from types import MappingProxyType

import numpy as np

from docmind.bilingual import source_coverage, translated_coverage
from docmind.language import is_chinese
from docmind.telemetry import record_span
from kb.retrieval.gather import HybridGatherer
from kb.retrieval.ports import ChunkSearcher
from kb.retrieval.rrf import RrfFuser
from kb.retrieval.translate import TRANSLATED_SHARE, QueryTranslator
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
                 executor: Executor | None = None, on_worker_thread: Callable[[], None] | None = None,
                 translator: QueryTranslator | None = None) -> None:
        """`translator`: BM25 also searches the question's dictionary translation; its hits in the other
        language than the question's are a third list, weighted TRANSLATED_SHARE of BM25's, when they match
        more of the question than its own words do (`_translated`)."""
        if candidate_k <= 0:
            raise ValueError("candidate_k must be positive")
        self._searcher = searcher
        self._translator = translator
        self._embed_query = embed_query
        self._candidate_k = candidate_k
        self._executor = executor
        self._on_worker_thread = on_worker_thread
        self._fuser = RrfFuser(weights={"vector": vector_weight, "bm25": bm25_weight,
                                        "bm25_translated": bm25_weight * TRANSLATED_SHARE}, rrf_k=rrf_k)

    def run(self, *, query: str, candidate_k: int | None = None, domains: Sequence[str] | None = None,
            document_ids: Sequence[int] | None = None) -> HybridResult:
        """`candidate_k` (per retriever) defaults to the constructor's; a caller asking for more passes more."""
        gatherer = HybridGatherer(searcher=self._searcher, embed_query=self._embed_query,
                                  candidate_k=candidate_k or self._candidate_k, executor=self._executor,
                                  on_worker_thread=self._on_worker_thread)
        gathered = gatherer.run(query=query, domains=domains, document_ids=document_ids)
        lists = {"vector": gathered.vector, "bm25": gathered.lexical}
        notes = list(gathered.notes)
        timings = dict(gathered.timings_ms)
        if self._translator is not None:
            start = time.perf_counter()
            translated = self._translated(query, gathered.lexical, candidate_k or self._candidate_k, domains,
                                          document_ids, notes)
            if translated:
                lists["bm25_translated"] = translated
                timings["bm25_translated"] = round((time.perf_counter() - start) * 1000, 2)
                record_span("retrieval.bm25_translated", start)
        start = time.perf_counter()
        fused = self._fuser.run(lists=lists)
        record_span("retrieval.rrf", start)
        return HybridResult(chunks=tuple(fused), vector_count=len(gathered.vector),
                            lexical_count=len(gathered.lexical), query_vector=gathered.query_vector,
                            timings_ms={**timings, "rrf": round((time.perf_counter() - start) * 1000, 2)},
                            notes=tuple(notes))

    def _translated(self, query: str, lexical: Sequence[ScoredChunk], k: int, domains: Sequence[str] | None,
                    document_ids: Sequence[int] | None, notes: list[str]) -> tuple[ScoredChunk, ...]:
        """BM25 hits of the translated question in the other language than the question, kept only when one of
        them holds translations of more of the question's translated words than any BM25 hit of the question's
        own words holds those words: a question its own words match as well is asked in the language of its
        answer, and a translation would only bring in text that shares a common word (几天 → "days"). A hit in
        the question's own language only holds a loan word, so a knowledge base without documents in the other
        language gets nothing here (documents do not record their language; this search is the check). Scored
        as their own stage, not "bm25": the confidence reads a BM25 hit of the question's own words as
        agreement, which a translation's hit is not.
        """
        try:
            translation = self._translator.run(query=query)
            if translation is None:
                return ()
            hits = self._searcher.lexical_search(translation.text, k=k, domains=domains, document_ids=document_ids)
        except Exception as exc:  # the translation only adds candidates; without it the search still stands
            notes.append(f"translated bm25 failed: {exc.__class__.__name__}: {exc}")
            return ()
        chinese = is_chinese(query)
        kept = [c for c in hits if is_chinese(c.searchable_text) != chinese]
        own_best = max((source_coverage(translation.terms, c.searchable_text) for c in lexical), default=0.0)
        if not kept or max(translated_coverage(translation.terms, c.searchable_text) for c in kept) <= own_best:
            return ()
        notes.append(f"bm25 also searched the translation: {translation.text}")
        return tuple(replace(c, stage_scores=MappingProxyType({})).with_score("bm25_translated", c.score)
                     for c in kept)
