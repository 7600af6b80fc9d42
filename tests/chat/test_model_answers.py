"""With a model configured: a reply cut at the token limit, an empty reply, and weak evidence."""
from __future__ import annotations

import threading

import pytest

from chat.events import order_problem
from chat.models import Message
from chat.pipeline import ChatPipeline
from docmind.backends import reset_backends
from tests.chat.chat_helpers import QUESTION, by_type, ingest_tiny_kb, types
from tests.fakes.openai_server import ScriptedReply

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def ask(user, message):
    return list(ChatPipeline().run(user=user, message=message, cancel=threading.Event()))


@pytest.fixture
def remote(settings, scripted_openai):
    from django.core.cache import cache

    cache.clear()
    ingest_tiny_kb()
    settings.OPENAI_API_KEY = "test-key"
    settings.OPENAI_BASE_URL = scripted_openai.base_url
    settings.LLM_TIMEOUT_SECONDS = 1
    reset_backends()
    scripted_openai.respond_with(lambda body: "{}")  # classifier, summaries
    yield scripted_openai
    reset_backends()
    cache.clear()


def test_a_reply_cut_at_the_token_limit_is_marked_truncated_and_not_cached(member, remote):
    remote.script([ScriptedReply(content="星河公司的年假为每年", finish_reason="length")], model="qwen-plus")
    events = ask(member, QUESTION)
    done = by_type(events, "done").data
    assert order_problem(types(events)) is None
    assert done["truncated"] is True and done["confidence_band"] == "low"
    assert done["answer"].startswith("星河公司的年假为每年") and len(done["answer"]) > len("星河公司的年假为每年")
    saved = Message.objects.get(pk=done["message_id"])
    assert saved.error == "truncated" and saved.retrieval_log["truncated"] is True

    remote.script(["星河公司的年假为每年十五天 [1]。"], model="qwen-plus")
    again = ask(member, QUESTION)
    assert by_type(again, "start").data["cached"] is False
    assert by_type(again, "done").data["truncated"] is False


def test_an_empty_reply_ends_the_turn_with_an_error(member, remote):
    remote.script([""], model="qwen-plus")
    events = ask(member, QUESTION)
    assert events[-1].type == "error" and events[-1].data["code"] == "llm_error"
    assert not any(e.type == "done" for e in events)


def test_weak_evidence_goes_to_the_model_instead_of_stopping_the_question(member, remote):
    # Asked in English about a Chinese document: the lexical signals cannot see the match.
    question = "How many days of annual leave does Xinghe give each year?"
    remote.script(["Xinghe gives fifteen days of annual leave a year [1]."], model="qwen-plus")
    events = ask(member, question)
    start = by_type(events, "start").data
    assert start["no_evidence"] is False
    answer_requests = [r for r in remote.requests if r.get("stream")]
    assert answer_requests, "the model never saw the question"
    if start["low_confidence"]:
        assert "相关性偏低" in answer_requests[-1]["messages"][0]["content"]
    assert "fifteen days" in by_type(events, "done").data["answer"]
