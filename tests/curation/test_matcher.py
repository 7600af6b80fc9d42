"""CuratedMatcher: the same words always match; a paraphrase by cosine, with the same numbers only."""
from __future__ import annotations

import numpy as np
import pytest

from curation.matcher import CuratedCandidates, CuratedMatcher


def _candidates(*rows: tuple[int, str, list[float]]) -> CuratedCandidates:
    matrix = np.asarray([r[2] for r in rows], dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return CuratedCandidates(tuple(r[0] for r in rows), tuple(r[1] for r in rows), matrix)


def test_it_rejects_a_threshold_outside_zero_to_one():
    with pytest.raises(ValueError):
        CuratedMatcher(threshold=0)


def test_the_same_words_match_whatever_the_punctuation_case_and_vector():
    found = CuratedMatcher().run(question="How do I reset my VPN password", vector=None,
                                 candidates=_candidates((5, "how do I reset my VPN password?", [0, 1])))
    assert found is not None and found.pair_id == 5


def test_a_close_vector_matches_and_a_far_one_does_not():
    candidates = _candidates((1, "年假有多少天？", [1, 0]), (2, "病假有多少天？", [0, 1]))
    near = CuratedMatcher(threshold=0.97).run(question="一年有几天年假", vector=np.array([0.99, 0.05]),
                                              candidates=candidates)
    assert near is not None and near.pair_id == 1
    assert CuratedMatcher(threshold=0.97).run(question="加班怎么算", vector=np.array([0.7, 0.7]),
                                              candidates=candidates) is None


def test_a_close_vector_with_other_numbers_does_not_match():
    candidates = _candidates((1, "2023年的年假有几天", [1, 0]))
    assert CuratedMatcher().run(question="2024年的年假有几天", vector=np.array([1.0, 0.0]),
                                candidates=candidates) is None


def test_no_candidates_no_match():
    assert CuratedMatcher().run(question="x", vector=np.array([1.0]), candidates=CuratedCandidates.empty(1)) is None
