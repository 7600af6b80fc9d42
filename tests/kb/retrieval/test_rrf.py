"""RrfFuser: weighted fusion, adaptive k, ties, empty input."""
from __future__ import annotations

import pytest

from kb.retrieval.rrf import RrfFuser
from tests.kb.retrieval.fakes import chunk


def test_it_rejects_a_non_positive_k():
    with pytest.raises(ValueError):
        RrfFuser(weights={}, rrf_k=0)


def test_it_returns_nothing_for_empty_lists():
    assert RrfFuser(weights={"vector": 1, "bm25": 1}).run(lists={"vector": [], "bm25": []}) == ()


def test_a_chunk_in_both_lists_beats_one_in_a_single_list():
    fused = RrfFuser(weights={"vector": 1, "bm25": 1}).run(
        lists={"vector": [chunk("a"), chunk("b")], "bm25": [chunk("b"), chunk("c")]})
    assert [c.chunk_id for c in fused][0] == "b"


def test_it_keeps_both_retrievers_scores_for_the_trace():
    fused = RrfFuser(weights={}).run(lists={
        "vector": [chunk("a").with_score("vector", 0.9)], "bm25": [chunk("a").with_score("bm25", 7.0)]})
    assert dict(fused[0].stage_scores) == pytest.approx({"vector": 0.9, "bm25": 7.0, "rrf": fused[0].score})


def test_weights_decide_between_list_heads():
    lists = {"vector": [chunk("v")], "bm25": [chunk("b")]}
    assert RrfFuser(weights={"vector": 2, "bm25": 1}).run(lists=lists)[0].chunk_id == "v"
    assert RrfFuser(weights={"vector": 1, "bm25": 2}).run(lists=lists)[0].chunk_id == "b"


@pytest.mark.parametrize(("rrf_k", "longest", "expected"), [(60, 3, 10), (60, 30, 30), (60, 200, 60), (5, 30, 5)])
def test_k_adapts_to_the_list_length(rrf_k, longest, expected):
    assert RrfFuser(weights={}, rrf_k=rrf_k).effective_k(longest) == expected


def test_ties_are_broken_by_best_rank_then_id():
    fused = RrfFuser(weights={}).run(lists={"vector": [chunk("z"), chunk("y")], "bm25": [chunk("y"), chunk("z")]})
    assert [c.chunk_id for c in fused] == ["y", "z"]


def test_it_does_not_mutate_its_input():
    original = chunk("a", score=0.5)
    RrfFuser(weights={}).run(lists={"vector": [original]})
    assert original.score == 0.5 and "rrf" not in original.stage_scores
