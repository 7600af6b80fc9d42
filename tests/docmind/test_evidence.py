"""docmind.evidence: the evidence budget measures evidence as the prompt renders it."""
import pytest

from docmind.evidence import BLOCK_SEPARATOR, SNIPPET_CHARS, EvidenceBudget, ScoredChunk, Source, evidence_block
from docmind.tokens import estimate_tokens


def _chunk(i: int, text: str, **kw) -> ScoredChunk:
    return ScoredChunk(chunk_id=str(i), content=text, score=1.0, document_title=f"手册{i}", **kw)


def test_a_block_costs_its_header_its_text_and_a_separator():
    chunk = _chunk(1, "年假按工龄计算。", domain="hr", context="手册1 › 第一章")
    assert EvidenceBudget.block_cost(1, chunk) == estimate_tokens(evidence_block(1, chunk) + BLOCK_SEPARATOR)
    assert EvidenceBudget.block_cost(1, chunk) > estimate_tokens(chunk.content)
    assert EvidenceBudget.header_cost(1, chunk) + estimate_tokens(chunk.content) >= EvidenceBudget.block_cost(1, chunk)


def test_a_web_page_is_charged_for_its_address():
    page = ScoredChunk(chunk_id="w", content="说明。", score=1.0, source=Source.WEB,
                       url="https://example.com/" + "a" * 70)
    assert EvidenceBudget.block_cost(1, page) >= estimate_tokens("a" * 70)


def test_packing_skips_what_does_not_fit_and_numbers_by_place_among_the_kept():
    big, small = _chunk(1, "长" * 90), _chunk(2, "短。")
    kept, spent = EvidenceBudget(60).pack([big, small])
    assert kept == [small] and spent == EvidenceBudget.block_cost(1, small) <= 60


def test_a_ceiling_lowers_the_budget_and_never_raises_it():
    chunks = [_chunk(i, "内容" * 20) for i in range(5)]
    assert EvidenceBudget(1000).pack(chunks, ceiling=100)[0] == EvidenceBudget(100).pack(chunks)[0]
    assert EvidenceBudget(100).pack(chunks, ceiling=1000)[0] == EvidenceBudget(100).pack(chunks)[0]


@pytest.mark.parametrize("tokens", [0, -1])
def test_the_budget_must_be_positive(tokens):
    with pytest.raises(ValueError):
        EvidenceBudget(tokens)


@pytest.mark.parametrize(("content", "child", "expected"), [
    ("父段落开头。子段落。父段落结尾。", "子段落。", "子段落。"),  # expanded: the child's own text, not the parent
    ("子段落。", None, "子段落。"),  # not expanded: the chunk is the child
    ("长" * 2000, "短" * 900, "短" * SNIPPET_CHARS),  # never longer than a source card's snippet
])
def test_a_snippet_is_the_matched_child_cut_to_a_source_cards_length(content, child, expected):
    assert _chunk(1, content, child_content=child).snippet() == expected
