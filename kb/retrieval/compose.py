"""Wires the retrieval path to the real backends; the one place that turns a config snapshot into stages.

The chat turn, the agentic tools, the retrieve API and the MCP search tool all build their retrieval here,
so they run the same stages with the same flags (HyDE, web compensation) from one snapshot.
"""
from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any

import numpy as np
from django.db import close_old_connections

from docmind import backends
from docmind.bilingual import LazyLexicon
from docmind.evidence import EvidenceBudget
from kb.retrieval.finisher import EvidenceFinisher
from kb.retrieval.hybrid import HybridSearch
from kb.retrieval.hyde import HydeExpander
from kb.retrieval.hyde_writer import HypotheticalAnswerWriter
from kb.retrieval.mmr import clamp_lambda
from kb.retrieval.params import RetrievalParams
from kb.retrieval.pipeline import OneShotRetriever, build_finisher
from kb.retrieval.ports import WebSearcher
from kb.retrieval.translate import QueryTranslator


def retrieval_params(snapshot: Mapping[str, Any], *, top_k: int | None = None) -> RetrievalParams:
    """Every retrieval tunable from one config snapshot; an explicit `top_k` (the caller's request) wins."""
    k = int(top_k) if top_k is not None else int(snapshot["retrieval.top_k"])
    return RetrievalParams(
        top_k=k,
        # Never fetch fewer candidates than the answer needs.
        candidate_k=max(int(snapshot["retrieval.candidate_k"]), k),
        vector_weight=float(snapshot["retrieval.vector_weight"]),
        bm25_weight=float(snapshot["retrieval.bm25_weight"]),
        rrf_k=int(snapshot["retrieval.rrf_k"]),
        hyde_enabled=bool(snapshot["retrieval.hyde.enabled"]),
        web_on_low=bool(snapshot["retrieval.web_compensation_on_low"]),
        mmr_lambda=clamp_lambda(_read_or_none(snapshot, "mmr.lambda")),
        mmr_similarity=str(snapshot["mmr.similarity"]),
        near_dup_jaccard=float(snapshot["compress.near_dup_jaccard"]),
        window_chars=int(snapshot["compress.window_chars"]),
        grader_mode=str(snapshot["grader.mode"]),
        web_on_ambiguous=bool(snapshot["grader.web_fallback_on_ambiguous"]),
        high_threshold=float(snapshot["grader.high_threshold"]),
        low_threshold=float(snapshot["grader.low_threshold"]),
        evidence=evidence_budget(snapshot),
    )


def evidence_budget(snapshot: Mapping[str, Any]) -> EvidenceBudget:
    """The evidence budget, read here only: retrieval packs with it, and a chat turn hands the same value
    (through its RetrievalParams) to its prompt and its direct read."""
    return EvidenceBudget(int(snapshot["rag.context_max_tokens"]))


def _read_or_none(snapshot: Mapping[str, Any], key: str) -> Any:
    # A value that cannot be read must not stop retrieval; the stage substitutes its default.
    try:
        return snapshot[key]
    except Exception:
        return None


def build_one_shot_retriever(snapshot: Mapping[str, Any], *, kb_ids: Collection[int], top_k: int | None = None,
                             params: RetrievalParams | None = None) -> OneShotRetriever:
    """The RULE_PLANNER retriever for one request, searching only the knowledge bases in `kb_ids`: web
    compensation when a web search is configured, HyDE when retrieval.hyde.enabled and a model is there
    to write the hypothetical answer. `params` are the caller's, already read from `snapshot` (a chat turn
    reads them once for all its stages); without them they are read here."""
    if params is not None and top_k is not None:
        raise ValueError("give top_k or params, not both")
    from kb.search import get_searcher  # heavy: the indexes load scipy (about 0.3 s) on first search

    params = params or retrieval_params(snapshot, top_k=top_k)
    embedder = backends.get_embedder()
    chat_model = backends.get_chat_model()
    hyde = None
    if params.hyde_enabled and chat_model is not None:
        writer = HypotheticalAnswerWriter(chat_model, str(snapshot["llm.small_model"]))
        hyde = HydeExpander(embedder=embedder, write_answer=writer)
    # Pool threads outlive requests: around each branch, drop the thread's DB connection (CONN_MAX_AGE=0),
    # so an idle pool holds none and a server-side close (MySQL wait_timeout) is never met.
    return OneShotRetriever(searcher=get_searcher().scoped(kb_ids), embedder=embedder,
                            reranker=backends.get_reranker(), params=params, web=backends.get_web_search(), hyde=hyde,
                            on_worker_thread=close_old_connections, translator=query_translator())


def build_hybrid_search(params: RetrievalParams, *, kb_ids: Collection[int],
                        embed_query: Callable[[str], np.ndarray]) -> HybridSearch:
    """The hybrid search of the agentic searchDocs tool, configured like the one-shot path's (and, like it,
    searching only the knowledge bases in `kb_ids`)."""
    from kb.search import get_searcher  # heavy: as in build_one_shot_retriever

    return HybridSearch(searcher=get_searcher().scoped(kb_ids), embed_query=embed_query, candidate_k=params.candidate_k,
                        vector_weight=params.vector_weight, bm25_weight=params.bm25_weight, rrf_k=params.rrf_k,
                        on_worker_thread=close_old_connections, translator=query_translator())


def query_translator() -> QueryTranslator:
    """The question for the other language's passages: its words by dictionary for BM25, its vector less its
    language's mean for a second vector search; each keeps only its hits in the other language."""
    return QueryTranslator(lexicon=LazyLexicon(), means=backends.get_language_means())


def build_evidence_finisher(params: RetrievalParams, *, kb_ids: Collection[int],
                            web: WebSearcher | None = None) -> EvidenceFinisher:
    """The shared tail for the agentic finalize(): pass it the union of all tool results (its vector and
    parent lookups see only the knowledge bases in `kb_ids`)."""
    from kb.search import get_searcher  # heavy: as in build_one_shot_retriever

    return build_finisher(params=params, searcher=get_searcher().scoped(kb_ids), embedder=backends.get_embedder(),
                          reranker=backends.get_reranker(), web=web)
