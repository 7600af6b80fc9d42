"""Wires the retrieval path to the real backends; the one place that turns a config snapshot into stages."""
from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from django.db import close_old_connections

from kb.retrieval.finisher import EvidenceFinisher
from kb.retrieval.hyde import AnswerWriter, HydeExpander
from kb.retrieval.params import RetrievalParams
from kb.retrieval.pipeline import OneShotRetriever, build_finisher
from kb.retrieval.ports import WebSearcher


def build_one_shot_retriever(snapshot: Mapping[str, Any], *, kb_ids: Collection[int], top_k: int | None = None,
                             web: WebSearcher | None = None,
                             hyde_writer: AnswerWriter | None = None) -> OneShotRetriever:
    """The RULE_PLANNER retriever for one request, searching only the knowledge bases in `kb_ids`.
    `web` (None = no web compensation) and
    `hyde_writer` (an LLM call writing a hypothetical answer; used only when retrieval.hyde.enabled)
    come from the chat layer, which owns those integrations."""
    from docmind.backends import get_embedder, get_reranker
    from kb.search import get_searcher

    params = RetrievalParams.from_config(snapshot, top_k=top_k)
    embedder = get_embedder()
    hyde = HydeExpander(embedder=embedder, write_answer=hyde_writer) if hyde_writer is not None else None
    # Pool threads outlive requests: around each branch, drop the thread's DB connection (CONN_MAX_AGE=0),
    # so an idle pool holds none and a server-side close (MySQL wait_timeout) is never met.
    return OneShotRetriever(searcher=get_searcher().scoped(kb_ids), embedder=embedder, reranker=get_reranker(),
                            params=params, web=web, hyde=hyde, on_worker_thread=close_old_connections)


def build_evidence_finisher(snapshot: Mapping[str, Any], *, kb_ids: Collection[int], top_k: int | None = None,
                            web: WebSearcher | None = None) -> EvidenceFinisher:
    """The shared tail for the agentic finalize(): pass it the union of all tool results (its vector and
    parent lookups see only the knowledge bases in `kb_ids`)."""
    from docmind.backends import get_embedder, get_reranker
    from kb.search import get_searcher

    params = RetrievalParams.from_config(snapshot, top_k=top_k)
    return build_finisher(params=params, searcher=get_searcher().scoped(kb_ids), embedder=get_embedder(),
                          reranker=get_reranker(), web=web)
