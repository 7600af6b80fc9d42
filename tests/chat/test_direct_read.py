"""DocumentDirectReader: uniform sampling in document order, within the token budget."""
from __future__ import annotations

import pytest

from chat.direct_read import DocumentDirectReader, sample_indices
from docmind.evidence import EvidenceBudget
from kb.retrieval.types import ScoredChunk


def _chunks(n: int, text: str = "段落内容。" * 20) -> list[ScoredChunk]:
    return [ScoredChunk(chunk_id=str(i), content=f"{i}:{text}", score=0.0, document_id=1) for i in range(n)]


@pytest.mark.parametrize("n,k,expected", [(10, 3, [0, 4, 9]), (5, 5, [0, 1, 2, 3, 4]), (3, 10, [0, 1, 2]),
                                          (100, 1, [0]), (7, 2, [0, 6])])
def test_sample_indices_spread_evenly(n, k, expected):
    assert sample_indices(n, k) == expected


def test_it_keeps_everything_that_fits():
    chunks = _chunks(4)
    assert DocumentDirectReader(max_chunks=10, budget=EvidenceBudget(10_000)).run(chunks=chunks) == tuple(chunks)


def test_it_samples_uniformly_in_document_order():
    got = DocumentDirectReader(max_chunks=5, budget=EvidenceBudget(10_000)).run(chunks=_chunks(41))
    assert [c.chunk_id for c in got] == ["0", "10", "20", "30", "40"]


def test_it_stays_within_the_evidence_budget_without_mutating_input():
    chunks = _chunks(30, "很长的段落。" * 200)
    got = DocumentDirectReader(max_chunks=8, budget=EvidenceBudget(1000)).run(chunks=chunks)
    assert len(got) == 8 and EvidenceBudget(1000).cost(got) <= 1000
    assert got[0].chunk_id == "0" and got[-1].chunk_id == "29"
    assert chunks[0].content.startswith("0:很长的段落。") and len(chunks[0].content) > 1000


def test_empty_document_gives_nothing():
    assert DocumentDirectReader(max_chunks=3, budget=EvidenceBudget(100)).run(chunks=[]) == ()


def test_it_rejects_bad_configuration():
    with pytest.raises(ValueError):
        DocumentDirectReader(max_chunks=0, budget=EvidenceBudget(10))


@pytest.mark.parametrize("budget", [300, 1000, 3000])
def test_every_sampled_part_reaches_the_prompt(budget):
    from chat.prompt import PromptAssembler, PromptParams
    from kb.retrieval.types import Grade

    chunks = [ScoredChunk(chunk_id=str(i), content=f"{i}:" + "很长的段落。" * 200, score=1.0, document_id=1,
                          document_title="一份很长的年度报告", domain="finance") for i in range(30)]
    evidence = EvidenceBudget(budget)
    picked = DocumentDirectReader(max_chunks=12, budget=evidence).run(chunks=chunks)
    parts = PromptAssembler(PromptParams(evidence=evidence, total_max_tokens=100_000)).run(
        question="总结这份报告", chunks=picked, grade=Grade.HIGH, history=[])
    assert picked[0].chunk_id == "0" and picked[-1].chunk_id == "29"
    assert parts.chunks == picked
