"""RerankStage: sorting by the reranker, and keeping RRF order when it fails or is slow."""
from __future__ import annotations

import time

import pytest

from kb.retrieval.rerank import RerankStage
from tests.kb.retrieval.fakes import chunk


class Scripted:
    name = "scripted"

    def __init__(self, scores=None, error: Exception | None = None, delay: float = 0.0):
        self.scores, self.error, self.delay = scores, error, delay

    def rerank(self, query, chunks, *, query_vector=None, chunk_vectors=None):
        time.sleep(self.delay)
        if self.error:
            raise self.error
        return list(self.scores)


CHUNKS = [chunk("a", score=0.03), chunk("b", score=0.02), chunk("c", score=0.01)]


def test_it_sorts_by_rerank_score_and_records_it():
    out = RerankStage(reranker=Scripted([0.1, 0.9, 0.5])).run(query="q", chunks=CHUNKS)
    assert [c.chunk_id for c in out.chunks] == ["b", "c", "a"]
    assert out.chunks[0].stage_scores["rerank"] == 0.9 and not out.notes


def test_equal_scores_keep_the_fused_order():
    out = RerankStage(reranker=Scripted([0.5, 0.5, 0.5])).run(query="q", chunks=CHUNKS)
    assert [c.chunk_id for c in out.chunks] == ["a", "b", "c"]


@pytest.mark.parametrize("reranker", [Scripted(error=RuntimeError("down")), Scripted([0.1]),
                                      Scripted([0.1, 0.2, 0.3], delay=0.5)])
def test_failure_wrong_length_or_timeout_keeps_rrf_order_with_a_note(reranker):
    out = RerankStage(reranker=reranker, timeout_s=0.2).run(query="q", chunks=CHUNKS)
    assert out.chunks == tuple(CHUNKS) and "kept RRF order" in out.notes[0]


def test_empty_input_is_not_sent_to_the_reranker():
    assert RerankStage(reranker=Scripted(error=AssertionError())).run(query="q", chunks=[]).chunks == ()
