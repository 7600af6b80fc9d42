"""The AGENTIC route inside the chat pipeline (offline planner): events in order, fallback on failure."""
from __future__ import annotations

import threading

import pytest

from chat.agentic.search import KbDocSearch
from chat.events import order_problem
from chat.models import Message
from chat.pipeline import ChatPipeline
from tests.chat.chat_helpers import BEARS_TITLE, HANDBOOK_TITLE, by_type, ingest_tiny_kb, types

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)
COMPARISON = "星河公司的年假有多少天？另外，北极熊吃什么？"


@pytest.fixture(autouse=True)
def kb():
    from django.core.cache import cache

    cache.clear()
    return ingest_tiny_kb()


def ask(user, message):
    return list(ChatPipeline().run(user=user, message=message, cancel=threading.Event()))


def test_a_two_focus_question_takes_the_agentic_loop(member):
    events = ask(member, COMPARISON)
    assert order_problem(types(events)) is None, types(events)
    assert by_type(events, "routing").data["mode"] == "AGENTIC"
    agentic = [e for e in events if e.type == "agentic"]
    assert len(agentic) == 1 and len(agentic[0].data["tool_calls"]) == 2
    titles = {c["document_title"] for c in by_type(events, "retrieval").data["kb_chunks"]}
    assert titles == {HANDBOOK_TITLE, BEARS_TITLE}


def test_a_failing_tool_falls_back_to_one_shot_with_an_answer(member, monkeypatch):
    def broken(self, query, *, k, domains=None):
        raise ConnectionError("vector store down")

    monkeypatch.setattr(KbDocSearch, "hybrid", broken)
    events = ask(member, COMPARISON)
    assert order_problem(types(events)) is None, types(events)
    done = by_type(events, "done")
    assert done.data["answer"] and by_type(events, "retrieval").data["kb_chunks"]
    log = Message.objects.get(pk=done.data["message_id"]).retrieval_log
    assert "agentic_fallback" in log and "ToolFailed" in log["agentic_fallback_reason"]
