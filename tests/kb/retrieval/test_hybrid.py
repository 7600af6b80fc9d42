"""HybridSearch: both retrievers fused by RRF, the candidate count per call, one failing retriever noted."""
from __future__ import annotations

import pytest

from kb.retrieval.gather import RetrievalFailed
from kb.retrieval.hybrid import HybridSearch
from tests.kb.retrieval.fakes import FakeEmbedder, FakeSearcher, unit


@pytest.fixture
def searcher() -> FakeSearcher:
    s = FakeSearcher()
    s.add("1", "苹果是一种水果", unit(1, 0, 0))
    s.add("2", "香蕉很好吃", unit(0, 1, 0))
    s.add("3", "苹果手机", unit(0, 0, 1))
    return s


def _search(searcher: FakeSearcher, **kwargs) -> HybridSearch:
    return HybridSearch(searcher=searcher, embed_query=FakeEmbedder({"苹果": unit(1, 0, 0)}).embed_query,
                        candidate_k=5, **kwargs)


def test_it_rejects_zero_candidates(searcher):
    with pytest.raises(ValueError):
        HybridSearch(searcher=searcher, embed_query=FakeEmbedder().embed_query, candidate_k=0)


def test_a_chunk_both_retrievers_found_ranks_first_with_its_stage_scores(searcher):
    result = _search(searcher).run(query="苹果")
    assert result.chunks[0].chunk_id == "1"
    assert {"vector", "bm25", "rrf"} <= set(result.chunks[0].stage_scores)
    assert (result.vector_count, result.lexical_count) == (3, 2)
    assert {"embed", "vector", "bm25", "rrf"} <= set(result.timings_ms)


def test_the_caller_can_ask_for_fewer_candidates_per_retriever(searcher):
    result = _search(searcher).run(query="苹果", candidate_k=1)
    assert (result.vector_count, result.lexical_count) == (1, 1)


def test_a_heavier_bm25_weight_lets_a_lexical_only_hit_pass_a_vector_only_hit(searcher):
    plain = [c.chunk_id for c in _search(searcher).run(query="苹果").chunks]
    lexical_heavy = [c.chunk_id for c in _search(searcher, bm25_weight=5.0).run(query="苹果").chunks]
    assert plain.index("3") > plain.index("1")
    assert lexical_heavy.index("3") < lexical_heavy.index("2")


def test_one_failing_retriever_is_a_note_and_both_failing_raise(searcher):
    searcher.fail_vector = True
    result = _search(searcher).run(query="苹果")
    assert result.notes and result.notes[0].startswith("vector retriever failed")
    assert [c.chunk_id for c in result.chunks] == ["1", "3"]
    searcher.fail_lexical = True
    with pytest.raises(RetrievalFailed):
        _search(searcher).run(query="苹果")
