"""RewriteValidator and the model path of QueryUnderstanding: the small model's rewrite, checked."""
from __future__ import annotations

import json

import pytest

from chat.types import ConversationContext, PreviousTurn, Rewrite, SourceRef
from chat.understanding import QueryUnderstanding
from chat.understanding.rewrite_check import RewriteValidator

OFFLINE = Rewrite(text="支付失败排查手册 扣款无回调怎么处理？", resolved=("第二类 → 扣款无回调",), leans_back=True)


@pytest.mark.parametrize("candidate,reason", [
    ("", "empty"), ("第二类怎么处理？", "unresolved"), ("How is the second category handled?", "language"),
    ("扣款无回调\n怎么处理", "line breaks"), ("扣款无回调怎么处理 [1]", "citation"), ("长" * 400, "too long"),
])
def test_a_bad_rewrite_is_refused_for_the_offline_one(candidate, reason):
    text, refused = RewriteValidator().run(message="第二类怎么处理？", candidate=candidate, offline=OFFLINE)
    assert text == OFFLINE.text and reason in refused


def test_a_good_rewrite_is_kept():
    text, refused = RewriteValidator().run(message="第二类怎么处理？", candidate="扣款成功但订单未更新怎么处理？",
                                           offline=OFFLINE)
    assert (text, refused) == ("扣款成功但订单未更新怎么处理？", "")


def test_a_standalone_question_may_come_back_unchanged():
    offline = Rewrite(text="年假有几天？")
    assert RewriteValidator().run(message="年假有几天？", candidate="年假有几天？", offline=offline)[1] == ""


class FakeModel:
    def __init__(self, reply: str) -> None:
        self.reply, self.calls = reply, []

    def complete(self, messages, **kw):
        self.calls.append(messages)
        return type("Reply", (), {"content": self.reply})()


def test_the_small_model_gets_the_last_sources_and_sections():
    context = ConversationContext(previous=PreviousTurn(
        question="支付失败排查手册里列了哪几类问题？", rewritten="", answer="……",
        sources=(SourceRef(1, "支付失败排查手册"),), sections=("一、支付超时", "二、扣款无回调")))
    model = FakeModel(json.dumps({"rewritten": "支付失败排查手册中扣款无回调怎么处理？"}, ensure_ascii=False))
    result = QueryUnderstanding(model, "small").run(message="第二类怎么处理？", context=context)
    prompt = model.calls[0][1]["content"]
    assert "《支付失败排查手册》" in prompt and "二、扣款无回调" in prompt
    assert result.rewritten == "支付失败排查手册中扣款无回调怎么处理？" and result.resolved


def test_an_unresolved_model_rewrite_falls_back_to_the_offline_rewrite():
    context = ConversationContext(previous=PreviousTurn(
        question="支付失败排查手册里列了哪几类问题？", rewritten="", answer="……",
        sources=(SourceRef(1, "支付失败排查手册"),), sections=("一、支付超时", "二、扣款无回调")))
    model = FakeModel(json.dumps({"rewritten": "第二类怎么处理？"}, ensure_ascii=False))
    result = QueryUnderstanding(model, "small").run(message="第二类怎么处理？", context=context)
    assert result.rewritten == "支付失败排查手册 扣款无回调怎么处理？" and result.source == "llm"
