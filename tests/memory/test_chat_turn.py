"""Memory inside a chat turn: recall into the answer, extraction after `done`, the MEMORY scope, isolation."""
from __future__ import annotations

import threading

import pytest

from chat.agentic.tools import ToolContext, offered_tools, recall_memory
from chat.agentic.tracker import RetrievedDocTracker
from chat.pipeline import ChatPipeline
from config_admin.conf import ai_config
from memory.compose import memory_params
from memory.models import UserMemory
from memory.services import memory_save
from memory.turn import _extract_pool, recall_tool
from memory.types import MemoryCandidate
from tests.chat.chat_helpers import QUESTION, by_type, ingest_tiny_kb

pytestmark = pytest.mark.django_db(transaction=True)



@pytest.fixture
def kb():
    return ingest_tiny_kb()


@pytest.fixture(autouse=True)
def fresh(memory_index, memory_cache):
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


def ask(user, message, **kw):
    return list(ChatPipeline().run(user=user, message=message, cancel=threading.Event(), **kw))


def remember(user, text: str, kind: str = "preference"):
    return memory_save(user_id=user.pk, candidate=MemoryCandidate(memory_type=kind, content=text)).memory


def drain_extraction() -> None:
    # One worker, first in first out: once this no-op ran, every queued extraction has finished.
    _extract_pool.submit(lambda: None).result(timeout=60)


def test_offline_answer_applies_and_names_a_remembered_brevity_preference(member, kb):
    remember(member, "我更喜欢简洁的回答")
    done = by_type(ask(member, QUESTION), "done").data
    assert "已按你记住的偏好作答：简洁回答" in done["answer"] and "我更喜欢简洁的回答" in done["answer"]
    assert done["answer"].count("\n- ") <= 2
    assert "[1]" in done["answer"]


def test_a_remembered_language_preference_switches_the_offline_wording(member, kb):
    remember(member, "以后请用英文回答我", "instruction")
    done = by_type(ask(member, QUESTION), "done").data
    assert done["answer"].startswith("The following is quoted from the knowledge base")
    assert "Applied your remembered preference: answers in English" in done["answer"]


def test_recalled_memories_reach_the_prompt_log_and_profile(member, kb):
    remember(member, "我在星河公司的上海分公司工作", "profile")
    events = ask(member, "根据我的情况，星河公司的年假有多少天？")
    from chat.models import Message

    log = Message.objects.get(pk=by_type(events, "done").data["message_id"]).retrieval_log
    assert [m["type"] for m in log["memory"]["recalled"]] == ["profile"]
    assert log["prompt"]["tokens"]["memory"] > 0 and log["prompt"]["tokens"]["profile"] > 0
    assert "我记得：我在星河公司的上海分公司工作" in by_type(events, "done").data["answer"]


def test_an_explicit_statement_becomes_a_memory_after_done(member, kb):
    events = ask(member, "我在星河公司做后端开发，年假有多少天？")
    assert by_type(events, "done")
    drain_extraction()
    assert list(UserMemory.objects.filter(user=member).values_list("memory_type", "content")) == [
        ("profile", "我在星河公司做后端开发")]


@pytest.mark.parametrize(("said", "kept"), [("我在上海工作", "我在上海工作"),
                                           ("I'm on the sales team", "I'm on the sales team")])
def test_a_statement_is_acknowledged_and_remembered_without_searching_the_documents(member, kb, said, kept):
    events = ask(member, said)
    done = by_type(events, "done").data
    assert not any(e.type == "retrieval" for e in events)
    assert done["citations"] == [] and kept in done["answer"]
    assert UserMemory.objects.filter(user=member, content__contains=kept.rstrip("。")).exists()


@pytest.mark.parametrize("said", ["我的工牌丢了", "我想知道星河公司的年假"])
def test_a_need_said_as_a_sentence_is_still_answered_from_the_documents(member, kb, said):
    events = ask(member, said)
    assert any(e.type == "retrieval" for e in events)


def test_a_knowledge_question_stores_no_memory(member, kb):
    ask(member, QUESTION)
    drain_extraction()
    assert not UserMemory.objects.filter(user=member).exists()


def test_remember_forget_and_list_through_the_memory_scope(member):
    said = by_type(ask(member, "记住我在上海工作"), "done").data["answer"]
    assert "我记住了" in said and "我在上海工作" in said
    listed = by_type(ask(member, "你记得我什么？"), "done").data["answer"]
    assert "我在上海工作" in listed
    forgot = by_type(ask(member, "忘掉我在上海工作这条"), "done").data["answer"]
    assert "已忘掉" in forgot
    drain_extraction()  # the forget request itself must not be stored back
    assert not UserMemory.objects.filter(user=member, invalidated_at__isnull=True).exists()
    assert UserMemory.objects.get(user=member).invalidated_reason == "forgotten"


def test_a_question_about_oneself_is_answered_from_what_was_said_without_searching_the_documents(member, kb):
    remember(member, "我在上海工作", "profile")
    remember(member, "我更喜欢简洁的回答")
    events = ask(member, "我在哪里工作？")
    done = by_type(events, "done").data
    assert "我在上海工作" in done["answer"] and "我更喜欢简洁的回答" not in done["answer"]
    assert not done["citations"] and not any(e.type == "retrieval" for e in events)


def test_a_question_about_oneself_with_nothing_said_says_so(member, kb):
    done = by_type(ask(member, "Where do I work?"), "done").data
    assert "You haven't told me" in done["answer"] and not done["citations"]


def test_forget_everything_clears_only_the_callers_memories(member, other_member):
    remember(member, "我更喜欢简洁的回答")
    remember(other_member, "I prefer answers in English")
    assert "全部 1 条" in by_type(ask(member, "忘掉我的所有记忆"), "done").data["answer"]
    assert UserMemory.objects.filter(user=other_member, invalidated_at__isnull=True).count() == 1


def test_another_users_memories_never_reach_my_turn(member, other_member, kb):
    remember(other_member, "我更喜欢简洁的回答")
    remember(other_member, "我在星河公司的北京分公司工作", "profile")
    events = ask(member, "根据我的情况，星河公司的年假有多少天？")
    from chat.models import Message

    log = Message.objects.get(pk=by_type(events, "done").data["message_id"]).retrieval_log
    assert log["memory"]["recalled"] == []
    assert "记住的偏好" not in by_type(events, "done").data["answer"]
    assert "北京分公司" not in by_type(ask(member, "你记得我什么？"), "done").data["answer"]


def test_recall_memory_tool_returns_the_users_memories_only(member, other_member):
    remember(member, "我对花生过敏", "fact")
    remember(other_member, "我对海鲜过敏", "fact")
    ctx = ToolContext(session_id="s", tracker=RetrievedDocTracker(), docs=None,
                      memory=recall_tool(user_id=member.pk, params=memory_params(ai_config.snapshot())))
    outcome = recall_memory(ctx, {"query": "我能吃花生酱吗"})
    assert "我对花生过敏" in outcome.text and "海鲜" not in outcome.text and not outcome.chunks


def test_store_memory_is_never_offered_to_the_loop():
    names = {t.name for t in offered_tools(web_enabled=True, sandbox_enabled=True)}
    assert "store_memory" not in names and "recall_memory" in names


@pytest.fixture
def remote(settings, scripted_openai):
    from docmind.backends import reset_backends

    settings.OPENAI_API_KEY = "test-key"
    settings.OPENAI_BASE_URL = scripted_openai.base_url
    settings.LLM_TIMEOUT_SECONDS = 10  # the scripted server answers at once; a loaded machine must not time it out
    reset_backends()
    scripted_openai.respond_with(lambda body: "{}")  # classifier and anything else unscripted
    yield scripted_openai
    reset_backends()


def test_with_a_model_the_extractor_runs_after_done_and_supersedes_what_it_names(member, kb, remote):
    import json

    old = remember(member, "我在上海工作", "profile")
    remote.script(["星河公司的年假为每年十五天 [1]。"], model="qwen-plus")
    remote.script([json.dumps({"memories": [{"type": "profile", "content": "我调到深圳分公司了",
                                             "supersedes": [old.pk]}]}, ensure_ascii=False)], model="qwen-flash")
    events = ask(member, "我刚调到深圳分公司，星河公司的年假有多少天？")
    assert by_type(events, "done").data["answer"] == "星河公司的年假为每年十五天 [1]。"
    drain_extraction()
    old.refresh_from_db()
    assert old.invalidated_reason == "superseded"
    assert list(UserMemory.objects.filter(user=member, invalidated_at__isnull=True)
                .values_list("content", "source")) == [("我调到深圳分公司了", "extractor")]
    answer_request = next(r for r in remote.requests if r["model"] == "qwen-plus")
    assert "我在上海工作" in answer_request["messages"][-1]["content"]  # recalled into the memory block
    extract_request = next(r for r in remote.requests if r["model"] == "qwen-flash")
    assert f'"id": {old.pk}' in extract_request["messages"][-1]["content"]


def test_extraction_after_done_is_traced_inside_its_turn(member, kb, spans):
    ask(member, "我在星河公司做后端开发，年假有多少天？")
    drain_extraction()
    finished = spans.get_finished_spans()
    turn = next(s for s in finished if s.name == "chat.turn")
    extraction = next(s for s in finished if s.name == "memory.extract")
    assert extraction.context.trace_id == turn.context.trace_id
    assert extraction.parent is not None and extraction.parent.span_id == turn.context.span_id
