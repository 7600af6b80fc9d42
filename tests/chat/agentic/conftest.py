"""Fixtures for the agentic loop: an in-memory KB behind DocSearch and the real retrieval tail."""
from __future__ import annotations

from collections.abc import Sequence

import pytest

from chat.agentic.orchestrator import AgenticSearchOrchestrator
from chat.agentic.tracker import RetrievedDocTracker
from docmind.llm.openai_model import OpenAIChatModel
from docmind.rerank import LocalReranker
from docmind.text import salient_terms
from kb.retrieval.params import RetrievalParams
from kb.retrieval.pipeline import build_finisher
from kb.retrieval.types import ScoredChunk, Source

DOCS = {
    1: ("北京", "北京是中华人民共和国的首都，常住人口约2189万人。"),
    2: ("上海", "上海是中国的经济中心，常住人口约2487万人。"),
    3: ("三体", "《三体》是长篇科幻小说，三体的作者是刘慈欣，2006年起连载。"),
    4: ("刘慈欣", "刘慈欣，1963年出生于北京，成长于山西阳泉，中国科幻作家。"),
}


class MemoryDocSearch:
    """DocSearch over DOCS: a chunk matches when it contains any salient query term."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.queries: list[tuple[str, str]] = []

    def _search(self, kind: str, query: str, k: int) -> list[ScoredChunk]:
        self.queries.append((kind, query))
        if self.fail:
            raise ConnectionError("vector store down")
        terms = [t.text for t in salient_terms(query)] or [query]
        hits = []
        for doc_id, (title, text) in DOCS.items():
            score = sum(1 for t in terms if t in text or t in title)
            if score:
                hits.append(ScoredChunk(chunk_id=str(doc_id * 10), content=text, score=float(score),
                                        document_id=doc_id, document_title=title, domain="general"))
        return sorted(hits, key=lambda c: -c.score)[:k]

    def hybrid(self, query: str, *, k: int, domains: Sequence[str] | None = None) -> list[ScoredChunk]:
        return self._search("hybrid", query, k)

    def lexical(self, query: str, *, k: int, domains: Sequence[str] | None = None) -> list[ScoredChunk]:
        return self._search("lexical", query, k)


class NoStore:
    """VectorLookup + ParentLookup with nothing stored: MMR uses Jaccard, parents stay children."""

    def vectors_of(self, chunk_ids):
        return {}

    def parents_of(self, chunk_ids):
        return {}


class RecordingFinisher:
    """The real EvidenceFinisher, remembering what finalize() asked of it."""

    def __init__(self, web=None) -> None:
        self.inner = build_finisher(params=RetrievalParams(), searcher=NoStore(), embedder=None,
                                    reranker=LocalReranker(), web=web)
        self.calls: list[dict] = []

    def run(self, *, query, candidates, allow_web=True, trace=()):
        self.calls.append({"query": query, "candidates": list(candidates), "allow_web": allow_web})
        return self.inner.run(query=query, candidates=candidates, allow_web=allow_web, trace=trace)


class FakeWeb:
    def __init__(self) -> None:
        self.queries: list[str] = []

    def search(self, query: str, *, k: int) -> list[ScoredChunk]:
        self.queries.append(query)
        return [ScoredChunk(chunk_id="web-1", content=f"网页：{query} 的最新消息。", score=1.0, source=Source.WEB,
                            document_title="新闻", url="https://news.example/1")]


@pytest.fixture
def docs() -> MemoryDocSearch:
    return MemoryDocSearch()


@pytest.fixture
def finisher() -> RecordingFinisher:
    return RecordingFinisher()


@pytest.fixture
def model(scripted_openai) -> OpenAIChatModel:
    return OpenAIChatModel(base_url=scripted_openai.base_url, api_key="test-key", timeout=5, max_retries=0)


@pytest.fixture
def make_loop(docs, finisher):
    def make(planner=None, **kwargs) -> AgenticSearchOrchestrator:
        kwargs.setdefault("tracker", RetrievedDocTracker())
        kwargs.setdefault("max_iterations", 4)
        return AgenticSearchOrchestrator(planner=planner, model="planner-model", docs=kwargs.pop("docs", docs),
                                         finisher=kwargs.pop("finisher", finisher), **kwargs)
    return make
