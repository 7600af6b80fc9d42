"""ChatPipeline end to end in offline mode over a tiny ingested KB, plus its bad-input and failure paths."""
from __future__ import annotations

import logging
import threading
import time

import pytest
from django.core.cache import cache

from chat.confidence import ConfidenceCalibrator
from chat.events import order_problem
from chat.models import Conversation, Message
from chat.pipeline import ChatPipeline
from docmind.backends import reset_backends
from tests.chat.chat_helpers import BEARS_TITLE, HANDBOOK_TITLE, QUESTION, by_type, ingest_tiny_kb, types
from tests.fakes.openai_server import delayed, http_error

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


@pytest.fixture
def kb():
    return ingest_tiny_kb()


def ask(user, message, **kw):
    cancel = kw.pop("cancel", None) or threading.Event()
    return list(ChatPipeline().run(user=user, message=message, cancel=cancel, **kw))


@pytest.fixture(autouse=True)
def fresh_cache():
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


def test_a_knowledge_question_streams_in_order_cites_and_is_saved(member, kb):
    events = ask(member, QUESTION)
    assert order_problem(types(events)) is None, types(events)
    assert {"retrieval", "rerank", "grader", "token"} <= set(types(events))
    start, done = by_type(events, "start"), by_type(events, "done")
    assert start.data["extractive"] is True
    assert "[1]" in done.data["answer"] and "十五天" in done.data["answer"]
    assert done.data["citations"][0]["document_title"] == HANDBOOK_TITLE
    assert by_type(events, "retrieval").data["kb_chunks"] and by_type(events, "retrieval").data["web_chunks"] == []
    saved = list(Message.objects.filter(conversation_id=done.data["conversation_id"]))
    assert [(m.role, m.status) for m in saved] == [("user", "complete"), ("assistant", "complete")]
    assert saved[0].content == QUESTION and saved[1].pk == done.data["message_id"]
    assert saved[1].retrieval_log["route"]["mode"] and saved[1].retrieval_log["kb_chunks"]
    # Saved as cited; the reader link is the asker's own, added as the event leaves and when read back.
    assert saved[1].citations == [{k: v for k, v in c.items() if k != "reader_url"} for c in done.data["citations"]]
    assert done.data["citations"][0]["reader_url"].startswith(f"/documents/{done.data['citations'][0]['document_id']}/")


def test_an_offline_quote_read_as_low_once_written_says_so_in_its_lead_and_start_event(member, kb, monkeypatch):
    plain = ask(member, QUESTION)
    assert by_type(plain, "start").data["low_confidence"] is False
    assert "相关性偏低" not in by_type(plain, "done").data["answer"]
    cache.clear()
    monkeypatch.setattr(ConfidenceCalibrator, "reads_low", lambda self, assessment, coverage=None: True)
    events = ask(member, QUESTION)
    done = by_type(events, "done").data
    assert by_type(events, "start").data["low_confidence"] is True
    assert done["answer"].startswith("以下内容摘自知识库（离线抽取模式），与问题的相关性偏低")
    assert done["confidence_band"] == "low"


def test_a_follow_up_stays_in_the_conversation(member, kb):
    first = by_type(ask(member, QUESTION), "done").data["conversation_id"]
    events = ask(member, "北极熊吃什么？", conversation_id=first)
    assert by_type(events, "done").data["conversation_id"] == first
    assert Message.objects.filter(conversation_id=first).count() == 4


def test_a_greeting_is_answered_without_retrieval(member):
    events = ask(member, "你好")
    assert types(events)[:3] == ["understanding", "routing", "start"]
    assert not {"retrieval", "rerank", "grader"} & set(types(events))
    assert order_problem(types(events)) is None and by_type(events, "done").data["answer"]


def test_a_selected_document_is_read_directly(member, kb):
    events = ask(member, "总结一下这篇文档", document_id=kb[BEARS_TITLE])
    assert by_type(events, "routing").data["mode"] == "SELECTED_DOC"
    titles = {c["document_title"] for c in by_type(events, "retrieval").data["kb_chunks"]}
    assert titles == {BEARS_TITLE}


@pytest.mark.parametrize(("message", "code"), [("   ", "empty_message"), ("问" * 4001, "message_too_long"),
                                                (None, "empty_message")])
def test_bad_messages_end_with_an_error_and_save_nothing(member, message, code):
    events = ask(member, message)
    assert types(events) == ["error"] and events[0].data["code"] == code
    assert Conversation.objects.count() == 0


def test_another_users_conversation_looks_unknown(member, other_member):
    theirs = Conversation.objects.create(user=other_member, title="secret")
    events = ask(member, QUESTION, conversation_id=theirs.pk)
    unknown = ask(member, QUESTION, conversation_id=999999)
    assert events[0].data["code"] == unknown[0].data["code"] == "conversation_not_found"
    assert events[0].data["message"] == unknown[0].data["message"]
    assert Message.objects.count() == 0


def test_an_unknown_document_is_a_clear_error(member):
    events = ask(member, QUESTION, document_id=424242)
    assert types(events) == ["error"] and events[0].data["code"] == "document_not_found"


def test_a_cancelled_turn_saves_the_question_and_a_cancelled_answer(member, kb):
    cancel = threading.Event()
    cancel.set()
    events = ask(member, QUESTION, cancel=cancel)
    assert events[-1].type == "error" and events[-1].data["code"] == "cancelled"
    assert list(Message.objects.values_list("role", "status")) == [("user", "complete"), ("assistant", "cancelled")]


def test_the_same_question_again_is_served_from_the_answer_cache(member, other_member, kb):
    first = ask(member, QUESTION)
    again = ask(member, QUESTION)
    assert order_problem(types(again)) is None
    assert by_type(again, "start").data["cached"] is True and by_type(again, "retrieval").data["cached"] is True
    assert by_type(again, "done").data["answer"] == by_type(first, "done").data["answer"]
    assert by_type(ask(other_member, QUESTION), "start").data["cached"] is False  # never across users


@pytest.fixture
def remote(settings, scripted_openai):
    settings.OPENAI_API_KEY = "test-key"
    settings.OPENAI_BASE_URL = scripted_openai.base_url
    settings.LLM_TIMEOUT_SECONDS = 1
    reset_backends()
    # Anything not scripted below (classifier, summaries) gets a harmless reply.
    scripted_openai.respond_with(lambda body: "{}")
    yield scripted_openai
    reset_backends()


@pytest.mark.parametrize(("script", "code"), [(http_error(500, times=3), "llm_unavailable"),
                                               ([delayed(3, "late")] * 3, "llm_timeout")])
def test_a_failing_model_ends_with_an_error_and_keeps_the_question(member, kb, remote, script, code):
    remote.script(script, model="qwen-plus")
    events = ask(member, QUESTION)
    assert events[-1].type == "error" and events[-1].data["code"] == code
    assert order_problem(types(events)) is None
    rows = list(Message.objects.values_list("role", "status", "content"))
    assert rows[0] == ("user", "complete", QUESTION) and rows[1][:2] == ("assistant", "error")


def test_a_remote_answer_streams_and_is_cited(member, kb, remote):
    remote.script(["星河公司的年假为每年十五天 [1]。"], model="qwen-plus")
    events = ask(member, QUESTION)
    done = by_type(events, "done")
    assert by_type(events, "start").data["extractive"] is False
    assert done.data["answer"] == "星河公司的年假为每年十五天 [1]。"
    assert done.data["citations"][0]["index"] == 1 and done.data["invalid_refs"] == []
    assert sum(1 for e in events if e.type == "token") > 1


def test_a_comparison_goes_through_the_agentic_loop_or_says_why_not(member, kb):
    events = ask(member, "对比星河公司的年假天数和报销期限")
    assert order_problem(types(events)) is None, types(events)
    routing = by_type(events, "routing").data
    assert routing["mode"] == "AGENTIC"
    if not routing["fallback_note"]:
        assert "agentic" in types(events)
    assert events[-1].type == "done" and "[1]" in events[-1].data["answer"]
    log = Message.objects.get(pk=events[-1].data["message_id"]).retrieval_log
    assert log["route"]["mode"] == "AGENTIC" and ("agentic" in log or routing["fallback_note"])


def test_meta_questions_list_documents_and_the_users_own_memories(member, other_member, kb):
    from memory.models import UserMemory

    UserMemory.objects.create(user=member, content="我更喜欢简洁的回答")
    UserMemory.objects.create(user=other_member, content="别人的秘密偏好")
    docs = by_type(ask(member, "知识库里有哪些文档？"), "done").data["answer"]
    assert HANDBOOK_TITLE in docs and BEARS_TITLE in docs
    memories = ask(member, "你记得我什么？")
    assert "retrieval" not in types(memories)
    answer = by_type(memories, "done").data["answer"]
    assert "简洁" in answer and "秘密" not in answer


class _StuckRetriever:
    """One-shot retrieval that hangs until released: a long question over a slow store or reranker."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def run(self, **kwargs):
        self.entered.set()
        self.release.wait(10)
        raise AssertionError("a cancelled turn must not use this result")


def test_stop_during_a_slow_retrieval_ends_the_turn_within_a_second_and_logs_one_line(member, kb, caplog):
    from chat.pipeline.stages import build_stages

    stuck = _StuckRetriever()

    def stages(snapshot, *, kb_ids):
        built = build_stages(snapshot, kb_ids=kb_ids)
        built._retriever = stuck
        return built

    cancel = threading.Event()
    received: list[tuple[float, object]] = []

    def run() -> None:
        for event in ChatPipeline(stages_factory=stages).run(user=member, message=QUESTION, cancel=cancel):
            received.append((time.monotonic(), event))

    thread = threading.Thread(target=run)
    caplog.set_level(logging.INFO)
    thread.start()
    try:
        assert stuck.entered.wait(30)
        pressed = time.monotonic()
        cancel.set()
        deadline = pressed + 5
        while not any(e.type == "error" for _, e in received) and time.monotonic() < deadline:
            time.sleep(0.01)
        at, last = received[-1]
        assert last.type == "error" and last.data["code"] == "cancelled"
        assert at - pressed < 1.0
    finally:
        stuck.release.set()
        thread.join(15)
    assert not thread.is_alive()
    assert list(Message.objects.values_list("role", "status")) == [("user", "complete"), ("assistant", "cancelled")]
    turn_lines = [r for r in caplog.records if r.name.startswith("chat.") and r.levelno >= logging.INFO]
    assert [r.getMessage().startswith("chat turn cancelled") for r in turn_lines] == [True]
    assert turn_lines[0].exc_info is None
