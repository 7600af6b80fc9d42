"""HybridGatherer: both retrievers, one failing, both failing."""
from __future__ import annotations

import pytest

from kb.retrieval.gather import HybridGatherer, RetrievalFailed
from tests.kb.retrieval.fakes import FakeEmbedder, FakeSearcher, unit


@pytest.fixture
def searcher() -> FakeSearcher:
    s = FakeSearcher()
    s.add("1", "苹果是一种水果", unit(1, 0, 0))
    s.add("2", "香蕉很好吃", unit(0, 1, 0))
    return s


def _gatherer(searcher: FakeSearcher) -> HybridGatherer:
    return HybridGatherer(searcher=searcher, embed_query=FakeEmbedder({"苹果": unit(1, 0, 0)}).embed_query,
                          candidate_k=5)


def test_it_rejects_zero_candidates(searcher):
    with pytest.raises(ValueError):
        HybridGatherer(searcher=searcher, embed_query=FakeEmbedder().embed_query, candidate_k=0)


def test_it_returns_both_lists_and_the_query_vector(searcher):
    result = _gatherer(searcher).run(query="苹果")
    assert result.vector[0].chunk_id == "1" and [c.chunk_id for c in result.lexical] == ["1"]
    assert result.query_vector is not None and not result.notes
    assert {"embed", "vector", "bm25"} <= set(result.timings_ms)


@pytest.mark.parametrize(("broken", "failed", "dead", "alive"), [("fail_vector", "vector", "vector", "lexical"),
                                                                  ("fail_lexical", "bm25", "lexical", "vector")])
def test_one_retriever_failing_is_noted_and_the_other_still_answers(searcher, broken, failed, dead, alive):
    setattr(searcher, broken, True)
    result = _gatherer(searcher).run(query="苹果")
    assert len(result.notes) == 1 and result.notes[0].startswith(f"{failed} retriever failed")
    assert getattr(result, dead) == ()
    assert [c.chunk_id for c in getattr(result, alive)][:1] == ["1"]


def test_both_retrievers_failing_raises(searcher):
    searcher.fail_vector = searcher.fail_lexical = True
    with pytest.raises(RetrievalFailed):
        _gatherer(searcher).run(query="苹果")
