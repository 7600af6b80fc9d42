"""The classifier's reply schema: a good reply reads whole, a wrong field becomes None alone, no object is an error."""
import json

import pytest

from docmind.llm.replies import parse_reply
from docmind.prompts.classifier import ClassifierReply, user_message


def _parse(data: dict) -> ClassifierReply:
    reply = f"```json\n{json.dumps(data, ensure_ascii=False)}\n```"
    return parse_reply(ClassifierReply, reply, what="classifier reply")


def test_a_good_reply_reads_every_field():
    reply = _parse({"rewritten": " 退款要多久？ ", "intent": "how_to", "complexity": "MEDIUM", "specificity": "BROAD",
                    "timeAware": True, "memoryAware": "false", "isAmbiguous": False, "scope": "kb_meta",
                    "scopeConfidence": "0.75", "memoryWriteHints": ["我在上海", " ", "我喜欢简短", "a", "b"]})
    assert reply == ClassifierReply(rewritten="退款要多久？", intent="HOW_TO", complexity="MEDIUM", specificity="BROAD",
                                    time_aware=True, memory_aware=False, is_ambiguous=False, scope="KB_META",
                                    scope_confidence=0.75, memory_write_hints=("我在上海", "我喜欢简短", "a"))


def test_missing_fields_are_none_so_the_caller_keeps_its_own():
    reply = _parse({})
    assert reply.rewritten == "" and reply.intent is None and reply.time_aware is None
    assert reply.scope_confidence is None and reply.memory_write_hints is None


def test_wrong_fields_become_none_each_on_its_own():
    reply = _parse({"rewritten": 42, "intent": "QUESTION", "complexity": None, "specificity": 3, "timeAware": "yes",
                    "scope": "KNOWLEDGE", "scopeConfidence": "high", "memoryWriteHints": "我在上海"})
    assert reply.rewritten == "" and reply.intent is None and reply.complexity is None and reply.specificity is None
    assert reply.time_aware is None and reply.scope_confidence is None and reply.memory_write_hints is None
    assert reply.scope == "KNOWLEDGE"


@pytest.mark.parametrize(("given", "read"), [(1.7, 1.0), (-2, 0.0), (True, 1.0)])
def test_the_confidence_is_clamped_to_zero_and_one(given, read):
    assert _parse({"scopeConfidence": given}).scope_confidence == read


def test_an_empty_hint_list_means_nothing_to_remember():
    assert _parse({"memoryWriteHints": []}).memory_write_hints == ()


@pytest.mark.parametrize("reply", ["我无法判断", '{"intent": "FACTUAL",}', None])
def test_a_reply_without_a_parsable_object_is_a_value_error(reply):
    with pytest.raises(ValueError, match="classifier reply"):
        parse_reply(ClassifierReply, reply, what="classifier reply")


def test_the_user_message_names_the_previous_sources_and_the_first_ones_sections():
    text = user_message(history=[("user", "退款" * 200), ("assistant", "见手册")], message="第二类呢？",
                        source_titles=["退款手册", "支付手册", "账单", "第四篇"], sections=["一、申请", "二、审核"])
    assert text.startswith("对话历史：\nuser: " + ("退款" * 150) + "\nassistant: 见手册")
    assert "《退款手册》、《支付手册》、《账单》\n" in text and "第四篇" not in text
    assert "《退款手册》的章节：一、申请 / 二、审核" in text and text.endswith("\n\n当前问题：第二类呢？")


def test_the_user_message_without_history_or_sources():
    assert user_message(history=[], message="年假几天？") == "对话历史：\n（无）\n\n当前问题：年假几天？"
