"""CitationParser: refs, coverage, confidence, bands and the ungrounded flag."""
from __future__ import annotations

import logging

import pytest

from chat.citations import CitationParser, split_sentences
from kb.retrieval.types import Grade, ScoredChunk


def _chunks(n: int = 3) -> list[ScoredChunk]:
    return [ScoredChunk(chunk_id=f"c{i}", content="x", score=0.5, document_id=i, document_title=f"Doc {i}")
            for i in range(1, n + 1)]


def _run(answer: str, top1: float = 0.8, grade=None, n: int = 3, **kw):
    return CitationParser(**kw).run(answer=answer, chunks=_chunks(n), rerank_top1=top1, grade=grade)


@pytest.mark.parametrize("answer,indices", [
    ("年假有五天[1]。病假按规定执行[2]。", [1, 2]),
    ("Leave is five days [1][2]. Sick leave applies [3].", [1, 2, 3]),
    ("年假五天[1,2]，病假另计[2，3]。", [1, 2, 3]),
    ("重复引用的内容在这里[2][2]。再次引用同一来源[2]。", [2]),
])
def test_it_parses_every_citation_form(answer, indices):
    report = _run(answer)
    assert [c.index for c in report.citations] == indices
    assert [c.chunk_id for c in report.citations] == [f"c{i}" for i in indices]


def test_out_of_range_refs_are_dropped_and_counted():
    report = _run("年假有五天 [1]。病假有十天 [4]。调休规则另见 [0][9]。")
    assert [c.index for c in report.citations] == [1]
    assert report.invalid_refs == [4, 0, 9]
    assert report.citation_coverage == pytest.approx(1 / 3)


@pytest.mark.parametrize("answer,coverage", [
    ("年假有五天的规定[1]。病假需要医院证明。", 0.5),
    ("Annual leave is five days.[1] Sick leave needs a note. [2]", 1.0),
    ("以下内容摘自知识库：\n- 年假按照工龄计算 [1]\n- 满一年可以休五天 [1]", 1.0),
    ("好的。", None),
    ("", None),
    ("没有任何引用的一句完整陈述。另一句也没有引用的话。", 0.0),
])
def test_sentence_level_coverage(answer, coverage):
    report = _run(answer)
    assert report.citation_coverage == (pytest.approx(coverage) if coverage is not None else None)


def test_confidence_is_coverage_times_top1_and_banded():
    report = _run("年假有五天的规定[1]。病假需要医院证明。", top1=0.8)
    assert report.confidence_score == pytest.approx(0.4)
    assert report.confidence_band == "medium"
    assert _run("年假有五天的规定[1]。", top1=0.9).confidence_band == "high"
    assert _run("年假有五天的规定[1]。", top1=0.1).confidence_band == "low"


def test_confidence_falls_back_to_top1_without_coverage():
    report = _run("好。", top1=0.7)
    assert report.citation_coverage is None and report.confidence_score == pytest.approx(0.7)


def test_band_thresholds_are_configurable():
    assert _run("年假有五天的规定[1]。", top1=0.5, high_band=0.5).confidence_band == "high"
    with pytest.raises(ValueError):
        CitationParser(high_band=0.2, medium_band=0.5)


def test_zero_coverage_with_low_grade_is_ungrounded_and_logged(caplog):
    with caplog.at_level(logging.WARNING, logger="chat.citations"):
        report = _run("这是一个没有引用的完整回答句子。", grade=Grade.LOW)
    assert report.ungrounded is True
    assert "ungrounded" in caplog.text


@pytest.mark.parametrize("answer,grade", [("这是一个没有引用的完整回答句子。", Grade.HIGH),
                                          ("这是一个有引用的完整回答句子[1]。", Grade.LOW)])
def test_not_ungrounded_otherwise(answer, grade):
    assert _run(answer, grade=grade).ungrounded is False


def test_as_dict_uses_the_event_keys():
    data = _run("年假有五天的规定[1]。").as_dict()
    assert {"citations", "citation_coverage", "invalid_refs", "confidence_score", "confidence_band"} <= set(data)
    assert data["citations"][0] == {"index": 1, "chunk_id": "c1", "document_id": 1, "document_title": "Doc 1",
                                    "source": "KB", "url": None, "location": None}


def test_a_citation_says_where_its_passage_is_in_the_original():
    chunk = ScoredChunk(chunk_id="7", content="密码每90天更换。", score=0.9, document_id=2, document_title="手册",
                        location={"page": 3, "boxes": [[50.0, 70.0, 260.0, 85.0]]})
    report = CitationParser().run(answer="密码每90天更换一次[1]。", chunks=[chunk], rerank_top1=0.9)
    assert report.as_dict()["citations"][0]["location"] == {"page": 3, "boxes": [[50.0, 70.0, 260.0, 85.0]]}


def test_a_citation_of_a_chunk_over_two_pages_opens_the_page_of_the_quoted_sentence():
    text = "访客须在前台登记。样品寄送每5天进行一次。"
    parts = [{"page": 1, "start": 0, "end": 9, "boxes": [[50.0, 70.0, 260.0, 85.0]]},
             {"page": 2, "start": 9, "end": len(text), "boxes": [[50.0, 90.0, 200.0, 105.0]]}]
    chunk = ScoredChunk(chunk_id="7", content=text, score=0.9, document_id=2, document_title="手册",
                        location={"page": 1, "boxes": [[50.0, 70.0, 260.0, 85.0]], "parts": parts})
    report = CitationParser().run(answer="样品寄送每5天进行一次。[1]", chunks=[chunk], rerank_top1=0.9)
    assert report.as_dict()["citations"][0]["location"] == {"page": 2, "boxes": [[50.0, 90.0, 200.0, 105.0]]}
    assert "parts" not in chunk.as_dict()["location"]


def test_a_sentence_quoted_from_the_parent_beyond_the_matched_child_opens_the_parents_page():
    parent = "访客须在前台登记。样品寄送每5天进行一次。"
    parts = [{"page": 1, "start": 0, "end": 9, "boxes": [[1.0, 1.0, 2.0, 2.0]]},
             {"page": 2, "start": 9, "end": len(parent), "boxes": [[3.0, 3.0, 4.0, 4.0]]}]
    chunk = ScoredChunk(chunk_id="7", content=parent, child_content="访客须在前台登记。", score=0.9, document_id=2,
                        document_title="手册", location={"page": 1, "boxes": [[1.0, 1.0, 2.0, 2.0]]},
                        parent_location={"page": 1, "boxes": [[1.0, 1.0, 2.0, 2.0]], "parts": parts})
    parser = CitationParser()
    beyond = parser.run(answer="样品寄送每5天进行一次。[1]", chunks=[chunk], rerank_top1=0.9)
    assert beyond.as_dict()["citations"][0]["location"] == {"page": 2, "boxes": [[3.0, 3.0, 4.0, 4.0]]}
    within = parser.run(answer="访客须在前台登记。[1]", chunks=[chunk], rerank_top1=0.9)
    assert within.as_dict()["citations"][0]["location"] == {"page": 1, "boxes": [[1.0, 1.0, 2.0, 2.0]]}


def test_split_sentences_keeps_decimals_and_trailing_refs_together():
    assert split_sentences("Rate is 3.5 percent. [1] Next one.") == ["Rate is 3.5 percent. [1]", "Next one."]


def test_a_parenthesised_aside_is_not_an_uncited_claim():
    from chat.citations import CitationParser
    from kb.retrieval.types import ScoredChunk

    chunk = ScoredChunk(chunk_id="1", content="年假十五天。", score=1.0, document_id=1, document_title="手册")
    answer = "- 年假为十五天[1]\n\n（已按你记住的偏好作答：简洁回答，来自记忆“我更喜欢简洁的回答”）"
    assert CitationParser().run(answer=answer, chunks=[chunk], rerank_top1=0.9).citation_coverage == 1.0


def test_a_list_item_quoting_several_sentences_is_covered_by_its_one_citation():
    from kb.retrieval.types import ScoredChunk

    chunk = ScoredChunk(chunk_id="1", content="甲。乙。", score=1.0)
    answer = "以下内容摘自知识库：\n\n- 第一句话很长。第二句话也很长。[1]\n\n这一句没有出处的话。"
    report = CitationParser().run(answer=answer, chunks=[chunk], rerank_top1=0.9)
    assert report.citation_coverage == 0.5
