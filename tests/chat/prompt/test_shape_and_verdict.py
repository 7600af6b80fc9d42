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


def test_a_low_verdict_names_the_words_the_evidence_never_says_to_the_model():
    low = PromptAssembler().run(question="支付可以预付吗？", chunks=[CHUNK], grade=HIGH, history=[],
                                low_confidence=True, unsaid=("预付",))
    assert "“预付”" in low.messages[0]["content"] and low.unsaid == ("预付",)
    # An answer the evidence supports is not told a word is missing, whatever the calibrator found.
    normal = PromptAssembler().run(question="支付可以预付吗？", chunks=[CHUNK], grade=HIGH, history=[],
                                   low_confidence=False, unsaid=("预付",))
    assert "预付" not in normal.messages[0]["content"] and normal.unsaid == ()


def test_at_most_three_unsaid_words_are_named():
    low = PromptAssembler().run(question="q", chunks=[CHUNK], grade=HIGH, history=[], low_confidence=True,
                                unsaid=("甲方", "乙方", "丙方", "丁方"))
    system = low.messages[0]["content"]
    assert all(f"“{w}”" in system for w in ("甲方", "乙方", "丙方")) and "丁方" not in system
