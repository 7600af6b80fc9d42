"""Extractors: explicit statements offline, structured model output with supersedes online."""
from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from chat.understanding.meta_intent_detector import memory_write_hints
from docmind.llm.openai_model import OpenAIChatModel
from docmind.prompts.memory_extraction import MemoryExtractionReply
from memory.extraction import ExplicitStatementExtractor, MemoryExtractor, classify, extract
from memory.types import MemoryItem
from tests.fakes.openai_server import http_error


def offline(message: str) -> list[tuple[str, str]]:
    found = ExplicitStatementExtractor().run(message=message, hints=memory_write_hints(message))
    return [(c.memory_type, c.content) for c in found]


@pytest.mark.parametrize(("message", "expected"), [
    ("记住我更喜欢简洁的回答", [("preference", "我更喜欢简洁的回答")]),
    ("请记住：我在上海工作", [("profile", "我在上海工作")]),
    ("我是一名后端工程师，怎么配置负载均衡？", [("profile", "我是一名后端工程师")]),
    ("remember that I prefer answers in English", [("preference", "I prefer answers in English")]),
    ("I work at Acme in Berlin.", [("profile", "I work at Acme in Berlin")]),
    ("我更喜欢详细一点的回答。", [("preference", "我更喜欢详细一点的回答")]),
    ("I usually prefer short answers", [("preference", "I usually prefer short answers")]),
    ("以后请用英文回答", []),  # no memory_write_hints: offline keeps only what understanding flagged
])
def test_offline_keeps_explicit_statements_about_the_user(message, expected):
    assert offline(message) == expected


@pytest.mark.parametrize("message", [
    "支付失败怎么排查？",
    "我在哪里可以找到退款流程？",
    "我是否需要重启服务？",
    "What is the retention period for logs?",
    "文档里说系统在上海机房部署",
])
def test_offline_never_stores_questions_or_document_content(message):
    assert offline(message) == []


@pytest.mark.parametrize(("text", "kind"), [
    ("我更喜欢简洁的回答", "preference"), ("我叫王磊", "profile"), ("以后回答时请附上命令示例", "instruction"),
    ("我对花生过敏", "fact"), ("I prefer short answers", "preference"), ("My name is Ada", "profile"),
])
def test_explicit_statements_are_typed(text, kind):
    assert classify(text) == kind


EXISTING = [MemoryItem(id=11, user_id=1, memory_type="profile", content="我在上海工作", access_count=0,
                       created_at=datetime(2026, 1, 1, tzinfo=UTC))]


def model(server) -> OpenAIChatModel:
    return OpenAIChatModel(base_url=server.base_url, api_key="k", timeout=5, max_retries=0)


def test_model_extractor_returns_typed_memories_with_supersedes(scripted_openai):
    scripted_openai.script([json.dumps({"memories": [
        {"type": "profile", "content": "我在北京工作", "supersedes": [11, 999]},
        {"type": "secret", "content": "ignored"},
    ]}, ensure_ascii=False)], model="flash")
    found = MemoryExtractor(chat_model=model(scripted_openai), model="flash").run(
        message="我下个月起调到北京工作了", existing=EXISTING)
    assert [(c.memory_type, c.content, c.supersedes) for c in found] == [("profile", "我在北京工作", (11,))]
    sent = scripted_openai.requests[0]["messages"][1]["content"]
    assert "我在上海工作" in sent and '"id": 11' in sent
    # Length limits on a memory's text are beyond strict mode: the schema guides the model without constraining it.
    assert scripted_openai.requests[0]["response_format"]["json_schema"] == {
        "name": "MemoryExtractionReply", "strict": False, "schema": MemoryExtractionReply.model_json_schema()}


def test_a_bad_model_reply_falls_back_to_explicit_statements(scripted_openai):
    scripted_openai.script(["not json at all"], model="flash")
    message = "记住我更喜欢简洁的回答"
    found, how = extract(message=message, hints=memory_write_hints(message), existing=[],
                         model=MemoryExtractor(chat_model=model(scripted_openai), model="flash"))
    assert how == "explicit (model failed)"
    assert [c.content for c in found] == ["我更喜欢简洁的回答"]


def test_a_reply_that_breaks_the_schema_falls_back_after_a_refused_schema_too(scripted_openai):
    scripted_openai.script([*http_error(400, message="Input should be 'text' or 'json_object' (response_format)"),
                            json.dumps({"memories": [{"type": "preference", "content": ""}]})], model="flash")
    message = "记住我更喜欢简洁的回答"
    found, how = extract(message=message, hints=memory_write_hints(message), existing=[],
                         model=MemoryExtractor(chat_model=model(scripted_openai), model="flash"))
    assert how == "explicit (model failed)" and [c.content for c in found] == ["我更喜欢简洁的回答"]
    assert ["response_format" in body for body in scripted_openai.requests] == [True, False]


@pytest.mark.parametrize(("old", "new"), [
    ("我在上海工作", "我现在在深圳工作"), ("I work in London", "I now work in Berlin"),
    ("我的猫叫小白", "我的猫叫豆豆"), ("我更喜欢简洁的回答", "我更喜欢详细的回答"),
    ("My name is Ada", "My name is Grace"),
])
def test_offline_a_new_value_for_the_same_slot_supersedes_the_old_statement(old, new):
    existing = [MemoryItem(id=5, user_id=1, memory_type="fact", content=old, access_count=0,
                           created_at=datetime(2026, 1, 1, tzinfo=UTC))]
    message = f"记住{new}" if "我" in new else f"Remember that {new}"
    found = ExplicitStatementExtractor().run(message=message, hints=memory_write_hints(message), existing=existing)
    assert [(c.content, c.supersedes) for c in found] == [(new, (5,))]


def test_offline_different_slots_do_not_supersede():
    existing = [MemoryItem(id=5, user_id=1, memory_type="fact", content="我的猫叫小白", access_count=0,
                           created_at=datetime(2026, 1, 1, tzinfo=UTC))]
    found = ExplicitStatementExtractor().run(message="记住我的狗叫旺财", hints=memory_write_hints("记住我的狗叫旺财"),
                                             existing=existing)
    assert [c.supersedes for c in found] == [()]
