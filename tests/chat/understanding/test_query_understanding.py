"""QueryUnderstanding: meta rules, the small-model classifier, the offline heuristic and the upgrade signals."""
from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from chat.types import Complexity, Intent, Scope
from chat.understanding import QueryUnderstanding
from chat.understanding.signals import DeterministicSignals
from docmind.llm.base import ChatReply, LlmTimeout
from docmind.llm.openai_model import OpenAIChatModel


class FakeModel:
    """Answers `complete` with fixed text (or raises), records the calls."""

    def __init__(self, reply: str | Exception) -> None:
        self.reply = reply
        self.calls: list[dict] = []

    def complete(self, messages, *, model, tools=None, temperature=0.2, max_tokens=None, response_schema=None,
                 structured_outputs="auto") -> ChatReply:
        self.calls.append({"messages": messages, "model": model})
        if isinstance(self.reply, Exception):
            raise self.reply
        return ChatReply(content=self.reply)

    def stream(self, messages, *, model, temperature=0.2, max_tokens=None) -> Iterator[str]:
        yield from ()


@pytest.mark.parametrize("message,scope", [
    ("你好", Scope.GREETING), ("您好！", Scope.GREETING), ("Hi there", Scope.GREETING), ("thanks!", Scope.GREETING),
    ("你是谁？", Scope.IDENTITY), ("Who are you?", Scope.IDENTITY), ("help", Scope.IDENTITY),
    ("你能做什么", Scope.IDENTITY), ("hello, what can you do?", Scope.IDENTITY),
    ("你有哪些文档？", Scope.KB_META), ("知识库里有什么", Scope.KB_META),
    ("What documents do you have?", Scope.KB_META),
    # The chat page's own suggestions, in both languages.
    ("Which documents are in the knowledge base?", Scope.KB_META), ("知识库里有哪些文档？", Scope.KB_META),
    ("What can you do?", Scope.IDENTITY),
    ("我之前说过什么？", Scope.MEMORY), ("你还记得我吗", Scope.MEMORY),
    ("What do you remember about me?", Scope.MEMORY),
    ("我在哪里工作？", Scope.MEMORY), ("Where do I work?", Scope.MEMORY),
    ("讲个笑话吧", Scope.OUT_OF_SCOPE), ("Tell me a joke", Scope.OUT_OF_SCOPE),
])
def test_meta_intents_short_circuit_without_calling_the_model(message, scope):
    model = FakeModel(RuntimeError("must not be called"))
    result = QueryUnderstanding(model, "qwen-turbo").run(message=message)
    assert result.scope is scope
    assert result.source == "meta-rules"
    assert model.calls == []


@pytest.mark.parametrize("message", [
    "你好，请问退货政策是什么？", "What do you know about Kubernetes?", "hello, how do I reset my password",
    "文档里关于年假的规定有哪些", "帮助中心的电话是多少", "我在试用期能请年假吗？",
])
def test_knowledge_questions_are_not_meta(message):
    assert QueryUnderstanding(None, "").run(message=message).scope is Scope.KNOWLEDGE


@pytest.mark.parametrize("message", [
    "A 和 B 有什么区别", "对比一下两种方案", "分别介绍 X 和 Y", "Python vs Java", "Compare Redis and Memcached",
    "What is the difference between TCP and UDP", "退货要多久？运费谁出？", "哪个更便宜",
])
def test_multi_focus_signals_raise_simple_to_medium(message):
    model = FakeModel(json.dumps({"complexity": "SIMPLE", "scope": "KNOWLEDGE"}))
    assert QueryUnderstanding(model, "m").run(message=message).complexity is Complexity.MEDIUM


def test_signals_never_lower_complexity():
    model = FakeModel(json.dumps({"complexity": "COMPLEX", "scope": "KNOWLEDGE"}))
    assert QueryUnderstanding(model, "m").run(message="A vs B").complexity is Complexity.COMPLEX
    assert QueryUnderstanding(model, "m").run(message="什么是 A").complexity is Complexity.COMPLEX


def test_signals_leave_a_single_focus_question_alone():
    result = QueryUnderstanding(None, "").run(message="年假有几天")
    assert DeterministicSignals().run(classification=result, message="年假有几天") is result
    assert result.complexity is Complexity.SIMPLE


def test_the_small_model_classifies_and_rewrites():
    reply = {"rewritten": "iPhone 15 的价格是多少", "intent": "factual", "complexity": "SIMPLE",
             "specificity": "SPECIFIC", "timeAware": True, "memoryAware": False, "isAmbiguous": False,
             "scope": "KNOWLEDGE", "scopeConfidence": 0.9, "memoryWriteHints": []}
    model = FakeModel("```json\n" + json.dumps(reply, ensure_ascii=False) + "\n```")
    history = [{"role": "user", "content": "介绍一下 iPhone 15"}, {"role": "assistant", "content": "……"}]
    result = QueryUnderstanding(model, "qwen-turbo").run(message="它多少钱？", history=history)
    assert result.rewritten == "iPhone 15 的价格是多少"
    assert result.intent is Intent.FACTUAL and result.time_aware is True and result.source == "llm"
    assert model.calls[0]["model"] == "qwen-turbo"
    assert "介绍一下 iPhone 15" in model.calls[0]["messages"][1]["content"]


@pytest.mark.parametrize("reply", ["not json at all", "{\"scope\": ", "[1, 2]", LlmTimeout("slow")])
def test_malformed_classifier_output_falls_back_to_the_heuristic(reply):
    result = QueryUnderstanding(FakeModel(reply), "m").run(message="如何申请年假？")
    assert result.source == "heuristic"
    assert result.scope is Scope.KNOWLEDGE and result.intent is Intent.HOW_TO


def test_invalid_fields_keep_the_heuristic_values():
    model = FakeModel(json.dumps({"intent": "BANANA", "complexity": 7, "scope": "KNOWLEDGE", "timeAware": "maybe"}))
    result = QueryUnderstanding(model, "m").run(message="为什么今天服务器变慢")
    assert result.intent is Intent.EXPLANATION and result.complexity is Complexity.SIMPLE
    assert result.time_aware is True


def test_an_unsure_non_knowledge_scope_still_retrieves():
    model = FakeModel(json.dumps({"scope": "OUT_OF_SCOPE", "scopeConfidence": 0.2}))
    assert QueryUnderstanding(model, "m").run(message="量子计算的原理").scope is Scope.KNOWLEDGE
    model = FakeModel(json.dumps({"scope": "OUT_OF_SCOPE", "scopeConfidence": 0.95}))
    assert QueryUnderstanding(model, "m").run(message="帮我订一张机票").scope is Scope.OUT_OF_SCOPE


@pytest.mark.parametrize("message,history,ambiguous,rewritten_has", [
    ("它多少钱？", [], True, "它多少钱"),
    ("它多少钱？", [{"role": "user", "content": "介绍一下 iPhone 15"}], False, "iPhone 15"),
    ("what about it?", [{"role": "user", "content": "Tell me about Redis"}], False, "Redis"),
    ("年假怎么申请", [], False, "年假"),
])
def test_offline_heuristic_handles_follow_ups(message, history, ambiguous, rewritten_has):
    result = QueryUnderstanding(None, "").run(message=message, history=history)
    assert result.is_ambiguous is ambiguous
    assert rewritten_has in result.rewritten


@pytest.mark.parametrize("message,history,unresolved", [
    ("目前，此品牌的台湾地区代理人是谁？", [], True),
    ("其地理位置的重要性体现在哪些方面？", [], True),
    ("它多少钱？", [{"role": "user", "content": "介绍一下 iPhone 15"}], False),
    ("北极熊的皮肤是什么颜色？", [], False),
])
def test_a_reference_nothing_names_is_marked_unresolved(message, history, unresolved):
    result = QueryUnderstanding(None, "").run(message=message, history=history)
    assert result.unresolved_reference is unresolved


def test_a_model_rewrite_that_names_the_subject_resolves_the_reference():
    model = FakeModel(json.dumps({"rewritten": "iPhone 15 的价格是多少", "scope": "KNOWLEDGE"}, ensure_ascii=False))
    history = [{"role": "user", "content": "介绍一下 iPhone 15"}, {"role": "assistant", "content": "……"}]
    result = QueryUnderstanding(model, "m").run(message="它多少钱？", history=history)
    assert result.source == "llm" and not result.unresolved_reference


@pytest.mark.parametrize("message,hint", [("记住我喜欢简洁的回答", "我喜欢简洁的回答"),
                                          ("Please remember that my name is Ada.", "my name is Ada")])
def test_memory_write_hints_are_extracted(message, hint):
    assert any(hint in h for h in QueryUnderstanding(None, "").run(message=message).memory_write_hints)


def test_as_dict_names_the_seed_fields_in_snake_case():
    data = QueryUnderstanding(None, "").run(message="年假几天").as_dict()
    assert set(data) == {"rewritten", "intent", "complexity", "specificity", "time_aware", "memory_aware",
                         "is_ambiguous", "scope", "scope_confidence", "memory_write_hints"}


def test_it_rejects_an_empty_message():
    with pytest.raises(ValueError):
        QueryUnderstanding(None, "").run(message="   ")


def test_classifier_over_the_real_client(scripted_openai):
    scripted_openai.script(['{"scope": "KNOWLEDGE", "complexity": "COMPLEX", "intent": "EXPLANATION"}'],
                           model="qwen-turbo")
    model = OpenAIChatModel(base_url=scripted_openai.base_url, api_key="k", timeout=2)
    result = QueryUnderstanding(model, "qwen-turbo").run(message="解释一下 RRF")
    assert result.complexity is Complexity.COMPLEX and result.source == "llm"
    assert scripted_openai.requests[0]["model"] == "qwen-turbo"
    assert scripted_openai.requests[0]["response_format"]["json_schema"]["name"] == "ClassifierReply"


def test_the_classifier_sends_no_reply_schema_when_structured_outputs_are_off(scripted_openai):
    scripted_openai.script(['{"scope": "KNOWLEDGE", "complexity": "COMPLEX"}'], model="qwen-turbo")
    model = OpenAIChatModel(base_url=scripted_openai.base_url, api_key="k", timeout=2)
    result = QueryUnderstanding(model, "qwen-turbo", structured_outputs="off").run(message="解释一下 RRF")
    assert result.complexity is Complexity.COMPLEX and "response_format" not in scripted_openai.requests[0]


def test_it_rejects_an_unknown_structured_outputs_mode():
    with pytest.raises(ValueError, match="structured_outputs"):
        QueryUnderstanding(FakeModel("{}"), "small", structured_outputs="always")


def test_a_question_in_traditional_characters_is_understood_as_its_simplified_form():
    understanding = QueryUnderstanding(None, "")
    traditional = understanding.run(message="請假需要誰審批？")
    simplified = understanding.run(message="请假需要谁审批？")
    assert traditional.rewritten == "请假需要谁审批？"
    assert (traditional.scope, traditional.intent) == (simplified.scope, simplified.intent)


def test_a_verb_object_word_split_by_its_count_is_searched_whole():
    understanding = QueryUnderstanding(None, "")
    assert understanding.run(message="一個月能補幾次卡？").rewritten == "一个月能补卡几次？"


def test_a_traditional_meta_question_gets_the_meta_answer():
    assert QueryUnderstanding(None, "").run(message="你有哪些文件？").scope is Scope.KB_META
