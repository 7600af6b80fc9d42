"""MmrSelector: diversity, λ clamping, cosine with Jaccard fallback, NaN guard."""
from __future__ import annotations

import numpy as np
import pytest

from kb.retrieval.mmr import MmrSelector, clamp_lambda
from tests.kb.retrieval.fakes import chunk, unit


@pytest.mark.parametrize(("raw", "expected"), [(0.5, 0.5), (1.7, 1.0), (-0.3, 0.0), ("0.4", 0.4),
                                               ("abc", 0.7), (None, 0.7), (float("nan"), 0.7)])
def test_lambda_is_clamped_and_unreadable_values_fall_back(raw, expected):
    assert clamp_lambda(raw) == pytest.approx(expected)


def test_it_rejects_zero_top_k():
    with pytest.raises(ValueError):
        MmrSelector(top_k=0)


@pytest.mark.parametrize("size", [0, 1])
def test_tiny_inputs_pass_through(size):
    chunks = [chunk(str(i)) for i in range(size)]
    assert MmrSelector(top_k=3).run(chunks=chunks).chunks == tuple(chunks)


def test_cosine_prefers_a_different_chunk_over_a_near_copy():
    chunks = [chunk("a", score=1.0), chunk("a2", score=0.95), chunk("b", score=0.9)]
    vectors = {"a": unit(1, 0, 0), "a2": unit(1, 0.01, 0), "b": unit(0, 1, 0)}
    out = MmrSelector(top_k=2, lambda_=0.5).run(chunks=chunks, vectors=vectors)
    assert [c.chunk_id for c in out.chunks] == ["a", "b"] and not out.notes


def test_lambda_one_is_pure_relevance():
    chunks = [chunk("a", score=1.0), chunk("a2", score=0.95), chunk("b", score=0.9)]
    vectors = {"a": unit(1, 0, 0), "a2": unit(1, 0.01, 0), "b": unit(0, 1, 0)}
    out = MmrSelector(top_k=2, lambda_=1.0).run(chunks=chunks, vectors=vectors)
    assert [c.chunk_id for c in out.chunks] == ["a", "a2"]


def test_a_chunk_without_a_vector_is_compared_by_jaccard():
    chunks = [chunk("a", "今天天气很好适合出门", 1.0), chunk("b", "今天天气很好适合出门。", 0.95),
              chunk("c", "量子计算的基本原理", 0.9)]
    out = MmrSelector(top_k=2, lambda_=0.5).run(chunks=chunks, vectors={"a": unit(1, 0, 0)})
    assert [c.chunk_id for c in out.chunks] == ["a", "c"]
    assert out.notes == ("mmr: Jaccard for 2 chunk(s) without a stored vector",)


def test_chunks_with_vectors_keep_cosine_when_another_has_none():
    # a2 is a near copy of a by vector but shares no bigram with it: only cosine sees the redundancy.
    chunks = [chunk("a", "报销流程", 1.0), chunk("a2", "expense claims", 0.95), chunk("b", "年假天数", 0.9),
              chunk("n", "会议室预订", 0.5)]
    vectors = {"a": unit(1, 0, 0), "a2": unit(1, 0.01, 0), "b": unit(0, 1, 0)}
    out = MmrSelector(top_k=2, lambda_=0.5).run(chunks=chunks, vectors=vectors)
    assert [c.chunk_id for c in out.chunks] == ["a", "b"]
    sim, missing = MmrSelector._cosine_matrix(chunks, vectors)
    assert missing == [3] and sim[0, 1] == pytest.approx(1.0, abs=1e-3) and sim[3, 0] == 0.0


def test_vectors_of_different_lengths_fall_back_to_jaccard_for_all():
    chunks = [chunk("a", "同一段文字", 1.0), chunk("b", "同一段文字", 0.9), chunk("c", "完全不同的内容", 0.8)]
    vectors = {"a": unit(1, 0, 0), "b": np.ones(4), "c": unit(0, 1, 0)}
    out = MmrSelector(top_k=2, lambda_=0.5).run(chunks=chunks, vectors=vectors)
    assert [c.chunk_id for c in out.chunks] == ["a", "c"] and out.notes[0].startswith("mmr: Jaccard instead of cosine")


def test_jaccard_setting_skips_vectors():
    chunks = [chunk("a", "同一段文字", 1.0), chunk("b", "同一段文字", 0.9), chunk("c", "完全不同的内容", 0.8)]
    out = MmrSelector(top_k=2, lambda_=0.5, similarity="jaccard").run(chunks=chunks)
    assert [c.chunk_id for c in out.chunks] == ["a", "c"] and not out.notes


def test_zero_and_nan_vectors_do_not_produce_nan():
    chunks = [chunk("a", score=1.0), chunk("z", score=0.9), chunk("n", score=0.8)]
    vectors = {"a": unit(1, 0, 0), "z": np.zeros(3), "n": np.array([np.nan, 1.0, 0.0])}
    out = MmrSelector(top_k=3).run(chunks=chunks, vectors=vectors)
    assert [c.chunk_id for c in out.chunks] == ["a", "z", "n"]


def test_equal_scores_keep_input_order():
    chunks = [chunk(x, score=0.5) for x in "abc"]
    vectors = {x: unit(*v) for x, v in zip("abc", [(1, 0, 0), (0, 1, 0), (0, 0, 1)], strict=True)}
    assert [c.chunk_id for c in MmrSelector(top_k=3).run(chunks=chunks, vectors=vectors).chunks] == ["a", "b", "c"]


def test_the_jaccard_matrix_equals_pairwise_jaccard_of_bigrams():
    from docmind.text import bigrams, jaccard

    texts = ["今天天气很好适合出门", "今天天气很好。", "量子计算的基本原理", " ", "a", "  ", "Hybrid retrieval"]
    sim = MmrSelector._jaccard_matrix([chunk(str(i), text, 1.0) for i, text in enumerate(texts)])
    for i, a in enumerate(texts):
        for j, b in enumerate(texts):  # " " and "  " normalise to nothing: two empty sets count as identical
            expected = 0.0 if i == j else jaccard(bigrams(a), bigrams(b))
            assert sim[i, j] == pytest.approx(expected)
