"""The model prompt follows the answer shape and the calibrated verdict, as the offline answer does."""
from __future__ import annotations

from chat.prompt import PromptAssembler
from docmind.prompts import answer as t
from kb.retrieval.types import Grade, GradeResult, ScoredChunk

CHUNK = ScoredChunk(chunk_id="1", content="支付请求默认超时时间为 30 秒。", score=0.9,
                    document_title="支付失败排查手册", context="支付失败排查手册 › 一、支付超时")
HIGH = GradeResult(grade=Grade.HIGH, rerank_top1=0.9, lex_coverage=1.0, kb_entity_weak=False,
                   web_compensation_needed=False)


def test_shape_instructions_reach_the_system_prompt():
    parts = PromptAssembler().run(question="支付超时和重复扣款有什么区别？", chunks=[CHUNK], grade=HIGH, history=[],
                                  instructions=t.SHAPE_INSTRUCTIONS["COMPARISON"])
    assert t.SHAPE_INSTRUCTIONS["COMPARISON"] in parts.messages[0]["content"]


def test_the_calibrated_verdict_overrides_the_grade_for_the_low_confidence_template():
    low = PromptAssembler().run(question="q", chunks=[CHUNK], grade=HIGH, history=[], low_confidence=True)
    assert low.low_confidence and low.messages[0]["content"].startswith(t.SYSTEM_LOW_CONFIDENCE.split("\n")[0])
    normal = PromptAssembler().run(question="q", chunks=[CHUNK], grade=HIGH, history=[], low_confidence=False)
    assert not normal.low_confidence


def test_the_evidence_header_names_the_section_once():
    parts = PromptAssembler().run(question="q", chunks=[CHUNK], grade=HIGH, history=[])
    user = parts.messages[1]["content"]
    assert "章节：一、支付超时" in user and user.count("一、支付超时") == 1
