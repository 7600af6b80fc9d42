"""HybridSearch: vector search ∥ BM25, fused by weighted RRF; the one hybrid search of every retrieval path."""
from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field, replace
from types import MappingProxyType

import numpy as np

from docmind.bilingual import ALL_WORDS_FOUND, OWN_WORDS_FOUND, TranslatedTerm, source_coverage, translated_coverage
from docmind.crosslingual import CENTRED_VECTOR_STAGE
from docmind.foreground import foreground
from docmind.language import is_chinese
from docmind.telemetry import record_span
from kb.retrieval.gather import GatherResult, HybridGatherer
from kb.retrieval.ports import ChunkSearcher
from kb.retrieval.rrf import RrfFuser
from kb.retrieval.translate import TRANSLATED_SHARE, QueryTranslator, TranslatedQuery
from kb.retrieval.types import ScoredChunk

# The stages whose hits are passages in the other language than the question's.
TRANSLATED_STAGE = "bm25_translated"
OTHER_LANGUAGE_STAGES = frozenset({CENTRED_VECTOR_STAGE, TRANSLATED_STAGE})


@dataclass(frozen=True)
class HybridResult:
    chunks: tuple[ScoredChunk, ...]  # fused, best first
    vector_count: int
    lexical_count: int
    query_vector: np.ndarray | None
    timings_ms: Mapping[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def searched_other_language(self) -> bool:
        """Whether a search for passages in the other language than the question's added any."""
        return any(OTHER_LANGUAGE_STAGES & set(c.stage_scores) for c in self.chunks)


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
        # The last search's own-language lists: asked again across languages (`run`, `across`), the same question
        # needs only the other language's searches. One search per instance: a retriever lives for one turn.
        self._last: tuple[tuple, GatherResult] | None = None
        # The centred vector's list weighs as the vector list: it is the same question's embedding, less the part
        # that only says which language it is in.
        self._fuser = RrfFuser(weights={"vector": vector_weight, "bm25": bm25_weight,
                                        CENTRED_VECTOR_STAGE: vector_weight,
                                        TRANSLATED_STAGE: bm25_weight * TRANSLATED_SHARE}, rrf_k=rrf_k)

    def run(self, *, query: str, candidate_k: int | None = None, domains: Sequence[str] | None = None,
            document_ids: Sequence[int] | None = None, across: bool = False) -> HybridResult:
        """`candidate_k` (per retriever) defaults to the constructor's; a caller asking for more passes more.

        `across`: search the other language than the question's however much of the question its own words find
        in its own language. A caller that has read the first search's evidence and found it does not answer
        (the asked value is stated nowhere) asks again with it: the words being there said the topic is, not
        that the answer is."""
        with foreground():  # background threads of this process wait meanwhile (docmind.foreground)
            return self._run(query=query, candidate_k=candidate_k, domains=domains, document_ids=document_ids,
                             across=across)

    def _run(self, *, query: str, candidate_k: int | None, domains: Sequence[str] | None,
             document_ids: Sequence[int] | None, across: bool) -> HybridResult:
        key = (query, candidate_k or self._candidate_k, tuple(domains or ()), tuple(document_ids or ()))
        last = self._last  # read once: a search on another thread may replace it meanwhile
        if last is not None and last[0] == key:
            gathered = last[1]
        else:
            gatherer = HybridGatherer(searcher=self._searcher, embed_query=self._embed_query,
                                      candidate_k=candidate_k or self._candidate_k, executor=self._executor,
                                      on_worker_thread=self._on_worker_thread)
            gathered = gatherer.run(query=query, domains=domains, document_ids=document_ids)
            self._last = (key, gathered)
        lists = {"vector": gathered.vector, "bm25": gathered.lexical}
        notes = list(gathered.notes)
        timings = dict(gathered.timings_ms)
        if self._translator is not None:
            self._other_language(query, gathered, lists, timings, notes, candidate_k or self._candidate_k, domains,
                                 document_ids, across)
        start = time.perf_counter()
        fused = self._fuser.run(lists=lists)
        record_span("retrieval.rrf", start)
        return HybridResult(chunks=tuple(fused), vector_count=len(gathered.vector),
                            lexical_count=len(gathered.lexical), query_vector=gathered.query_vector,
                            timings_ms={**timings, "rrf": round((time.perf_counter() - start) * 1000, 2)},
                            notes=tuple(notes))

    def _other_language(self, query: str, gathered: GatherResult, lists: dict[str, Sequence[ScoredChunk]],
                        timings: dict[str, float], notes: list[str], k: int, domains: Sequence[str] | None,
                        document_ids: Sequence[int] | None, across: bool) -> None:
        """Adds the lists of the two searches for passages in the other language than the question's: its centred
        vector, its dictionary translation. The question is translated once, and how much of it its own words find
        in its own language gates both, unless `across` opens them."""
        try:
            terms = self._translator.translate(query)
        except Exception as exc:  # the translation only adds candidates; without it the search still stands
            notes.append(f"translated bm25 failed: {exc.__class__.__name__}: {exc}")
            return
        own_best = 0.0 if across else max((source_coverage(terms, c.searchable_text) for c in gathered.lexical),
                                          default=0.0)

        def add(stage: str, started: float, found: tuple[ScoredChunk, ...]) -> None:
            if found:
                lists[stage] = found
                timings[stage] = round((time.perf_counter() - started) * 1000, 2)
                record_span(f"retrieval.{stage}", started)

        if gathered.query_vector is not None:
            started = time.perf_counter()
            add(CENTRED_VECTOR_STAGE, started,
                self._centred(query, gathered.query_vector, own_best, k, domains, document_ids, notes))
        started = time.perf_counter()
        add(TRANSLATED_STAGE, started, self._translated(query, terms, own_best, k, domains, document_ids, notes))

    def _centred(self, query: str, query_vector: np.ndarray, own_best: float, k: int,
                 domains: Sequence[str] | None, document_ids: Sequence[int] | None,
                 notes: list[str]) -> tuple[ScoredChunk, ...]:
        """Vector hits, in the other language than the question, of its vector less its language's mean
        (docmind.crosslingual): the question's own vector ranks nearly every passage of its language above one
        in the other language that answers it, so those never reach the candidates. Scored as their own stage:
        the confidence reads "vector" and "bm25" on one chunk as two retrievers agreeing. A knowledge base in
        one language gets nothing here.

        How much of the question a BM25 hit of its own words holds (`own_best`) decides whether they are kept:
        every word, never (its language answers it word for word, and the other language would only add text near
        its topic); less than OWN_WORDS_FOUND, always (its words are mostly not written in its language). In
        between, words cannot tell, and the meaning decides: they are kept when the best hit in the other language
        is nearer the centred question than the best hit in its own language, both read less their language's
        mean (`_nearer_across`)."""
        if own_best >= ALL_WORDS_FOUND:
            return ()
        try:
            chinese = is_chinese(query)
            centred = self._translator.vector(query_vector, chinese=chinese)
            if centred is None:
                return ()
            hits = self._searcher.vector_search(centred, k=k, domains=domains, document_ids=document_ids)
            if own_best >= OWN_WORDS_FOUND and not self._nearer_across(centred, hits, chinese):
                return ()
        except Exception as exc:  # only adds candidates: the search of the question's own vector still stands
            notes.append(f"centred vector search failed: {exc.__class__.__name__}: {exc}")
            return ()
        return tuple(replace(c, stage_scores=MappingProxyType({})).with_score(CENTRED_VECTOR_STAGE, c.score)
                     for c in hits if is_chinese(c.searchable_text) != chinese)

    def _nearer_across(self, centred: np.ndarray, hits: Sequence[ScoredChunk], chinese: bool) -> bool:
        """Whether the best of `hits` (scored against `centred`) in the other language than `chinese` is nearer
        than the best in that language, each score less what its passage's language alone adds: on that one scale
        the two languages compare by meaning. A passage of the question's language outside the hits counts as
        farther than every hit; without the means, none is nearer."""
        offsets = self._translator.language_offsets(centred)
        if offsets is None:
            return False
        best = {True: -np.inf, False: -np.inf}
        for hit in hits:
            language = is_chinese(hit.searchable_text)
            best[language] = max(best[language], hit.score - offsets[0 if language else 1])
        return best[not chinese] > best[chinese]

    def _translated(self, query: str, terms: tuple[TranslatedTerm, ...], own_best: float, k: int,
                    domains: Sequence[str] | None, document_ids: Sequence[int] | None,
                    notes: list[str]) -> tuple[ScoredChunk, ...]:
        """BM25 hits of the translated question in the other language than the question, kept only when one of
        them holds translations of more of the question's translated words than any BM25 hit of the question's
        own words holds those words: a question its own words match as well is asked in the language of its
        answer, and a translation would only bring in text that shares a common word (几天 → "days"). A hit in
        the question's own language only holds a loan word, so a knowledge base without documents in the other
        language gets nothing here (documents do not record their language; this search is the check). Scored
        as their own stage, not "bm25": the confidence reads a BM25 hit of the question's own words as
        agreement, which a translation's hit is not.
        """
        if not terms:
            return ()
        translation = TranslatedQuery(terms=terms)
        try:
            hits = self._searcher.lexical_search(translation.text, k=k, domains=domains, document_ids=document_ids)
        except Exception as exc:  # the translation only adds candidates; without it the search still stands
            notes.append(f"translated bm25 failed: {exc.__class__.__name__}: {exc}")
            return ()
        chinese = is_chinese(query)
        kept = [c for c in hits if is_chinese(c.searchable_text) != chinese]
        if not kept or max(translated_coverage(translation.terms, c.searchable_text) for c in kept) <= own_best:
            return ()
        notes.append(f"bm25 also searched the translation: {translation.text}")
        return tuple(replace(c, stage_scores=MappingProxyType({})).with_score(TRANSLATED_STAGE, c.score)
                     for c in kept)
