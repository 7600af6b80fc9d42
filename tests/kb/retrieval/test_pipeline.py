"""OneShotRetriever and EvidenceFinisher over in-memory fakes: the whole path, failures, web compensation."""
from __future__ import annotations

import pytest

from docmind.rerank import LocalReranker
from kb.retrieval.hyde import HydeExpander
from kb.retrieval.params import RetrievalParams
from kb.retrieval.pipeline import OneShotRetriever, build_finisher
from kb.retrieval.types import Grade, Source
from tests.kb.retrieval.fakes import FakeEmbedder, FakeSearcher, chunk, unit, web_chunk

PARENT = "珠穆朗玛峰是世界最高峰。珠穆朗玛峰的海拔为8848米。它位于中国与尼泊尔边境。"


@pytest.fixture
def searcher() -> FakeSearcher:
    s = FakeSearcher()
    s.add("1", "珠穆朗玛峰是世界最高峰。", unit(1, 0.1, 0), parent=(100, PARENT), document_id=1)
    s.add("2", "珠穆朗玛峰的海拔为8848米。", unit(1, 0, 0), parent=(100, PARENT), document_id=1)
    s.add("3", "长江是中国最长的河流。", unit(0, 1, 0), document_id=2)
    s.add("4", "黄河是中国第二长河。", unit(0, 0.9, 0.1), document_id=3)
    return s


QUERY = "珠穆朗玛峰的海拔是多少"


MARS_QUERY = "火星最高的山叫什么"
MARS_PAGE = "火星上最高的山是奥林帕斯山，高约两万米。"


def _retriever(searcher, **kwargs) -> OneShotRetriever:
    embedder = FakeEmbedder({QUERY: unit(1, 0, 0), MARS_QUERY: unit(0, 0, 1), MARS_PAGE: unit(0, 0.1, 1)})
    return OneShotRetriever(searcher=searcher, embedder=embedder, reranker=LocalReranker(cos_floor=0.0),
                            params=RetrievalParams(top_k=3), **kwargs)


def test_it_returns_expanded_compressed_graded_evidence(searcher):
    evidence = _retriever(searcher).run(query=QUERY)
    top = evidence.chunks[0]
    assert top.content == PARENT and top.parent_id == 100 and top.child_content
    assert len([c for c in evidence.chunks if c.parent_id == 100]) == 1  # siblings collapsed
    assert evidence.grade.grade == Grade.HIGH
    assert {"embed", "vector", "bm25", "rrf", "rerank", "mmr", "parents", "compress", "grade", "total"} \
        <= set(evidence.timings_ms)


def test_one_retriever_failing_still_answers_and_says_so(searcher):
    searcher.fail_vector = True
    evidence = _retriever(searcher).run(query=QUERY)
    assert evidence.chunks and any("vector retriever failed" in line for line in evidence.trace)


def test_top_k_limits_the_evidence(searcher):
    assert len(_retriever(searcher).run(query="中国", top_k=1).chunks) == 1


def test_it_rejects_zero_top_k(searcher):
    with pytest.raises(ValueError):
        _retriever(searcher).run(query=QUERY, top_k=0)


class FakeWeb:
    def __init__(self, results=None, error=None):
        self.results, self.error, self.calls = results or [], error, 0

    def search(self, query, *, k):
        self.calls += 1
        if self.error:
            raise self.error
        return self.results[:k]


def test_a_low_grade_adds_web_results_once(searcher):
    web = FakeWeb([web_chunk("w1", MARS_PAGE)])
    evidence = _retriever(searcher, web=web).run(query=MARS_QUERY)
    assert web.calls == 1 and any(c.source == Source.WEB for c in evidence.chunks)
    assert any("web compensation" in line for line in evidence.trace)


def test_web_failure_keeps_the_kb_evidence(searcher):
    web = FakeWeb(error=TimeoutError("slow"))
    evidence = _retriever(searcher, web=web).run(query=MARS_QUERY)
    assert web.calls == 1 and any("web compensation failed" in line for line in evidence.trace)


def test_finisher_reranks_the_union_and_skips_web_when_told(searcher):
    web = FakeWeb([web_chunk("w1", "无关内容")])
    finisher = build_finisher(params=RetrievalParams(top_k=3), searcher=searcher, embedder=FakeEmbedder(),
                              reranker=LocalReranker(), web=web)
    union = [chunk("3", "长江是中国最长的河流。", 5.0), web_chunk("w2", "长江全长约6300公里，是中国最长的河流。", 0.1),
             chunk("3", "长江是中国最长的河流。", 1.0)]
    evidence = finisher.run(query="火星最高的山", candidates=union, allow_web=False)
    assert web.calls == 0
    assert sorted(c.chunk_id for c in evidence.chunks) == ["3", "w2"]  # duplicates removed
    assert "dedupe: 3 → 2 unique" in evidence.trace
    assert all("rerank" in c.stage_scores for c in evidence.chunks)


def test_hyde_is_used_only_when_enabled(searcher):
    calls = []

    def writer(q):
        calls.append(q)
        return "珠穆朗玛峰海拔8848米"

    embedder = FakeEmbedder({QUERY: unit(1, 0, 0)})
    hyde = HydeExpander(embedder=embedder, write_answer=writer)
    off = OneShotRetriever(searcher=searcher, embedder=embedder, reranker=LocalReranker(), hyde=hyde)
    off.run(query=QUERY)
    assert calls == []
    on = OneShotRetriever(searcher=searcher, embedder=embedder, reranker=LocalReranker(), hyde=hyde,
                          params=RetrievalParams(hyde_enabled=True))
    evidence = on.run(query=QUERY)
    assert calls == [QUERY] and any("hyde" in line for line in evidence.trace)


def test_hyde_writer_failure_falls_back_to_the_query_vector():
    embedder = FakeEmbedder({"q": unit(1, 0, 0)})

    def broken(q):
        raise RuntimeError("llm down")

    hyde = HydeExpander(embedder=embedder, write_answer=broken)
    assert (hyde.run(query="q") == unit(1, 0, 0)).all() and "failed" in hyde.last_note


def test_searching_and_finishing_run_in_the_foreground(searcher):
    # background threads (ingestion) give way while a question's retrieval runs: docmind.foreground
    from docmind import foreground

    seen = []
    search, parents = searcher.vector_search, searcher.parents_of
    searcher.vector_search = lambda *a, **k: seen.append(("search", foreground.busy())) or search(*a, **k)
    searcher.parents_of = lambda *a, **k: seen.append(("parents", foreground.busy())) or parents(*a, **k)
    _retriever(searcher).run(query=QUERY)
    assert ("search", True) in seen and ("parents", True) in seen and not foreground.busy()


def _translator():
    from docmind.bilingual import BilingualLexicon
    from kb.retrieval.translate import QueryTranslator

    return QueryTranslator(lexicon=BilingualLexicon([("海拔", ("altitude",)), ("珠穆朗玛峰", ("everest",))]))


def test_asked_across_a_base_in_the_questions_language_gives_nothing_to_rank_again(searcher):
    assert _retriever(searcher, translator=_translator()).run_across(query=QUERY) is None


def test_asked_across_the_other_languages_passage_its_words_name_joins_the_evidence(searcher):
    searcher.add("en", "Everest: altitude 8,849 m.", unit(0, 0, 1), document_id=4)
    evidence = _retriever(searcher, translator=_translator()).run_across(query=QUERY)
    assert evidence is not None
    assert "en" in {c.chunk_id for c in evidence.chunks}
