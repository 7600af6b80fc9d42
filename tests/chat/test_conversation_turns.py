"""Conversation-grade turns through ChatPipeline: follow-ups rewritten from the conversation, abstention,
and a band that agrees with the low-relevance label — offline and with a (scripted) model."""
from __future__ import annotations

import json
import threading

import pytest

from chat import selectors
from chat.models import Conversation
from chat.pipeline import ChatPipeline
from docmind.backends import reset_backends
from tests.chat.chat_helpers import BEARS_TITLE, HANDBOOK_TITLE, QUESTION, by_type, ingest_tiny_kb

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)



@pytest.fixture
def kb():
    return ingest_tiny_kb()


@pytest.fixture(autouse=True)
def fresh_cache():
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


def ask(user, message, **kw):
    return list(ChatPipeline().run(user=user, message=message, cancel=threading.Event(), **kw))


def cited_titles(events) -> set[str]:
    return {c["document_title"] for c in by_type(events, "done").data["citations"]}


def test_a_pronoun_follow_up_is_answered_from_the_document_the_last_answer_cited(member, kb):
    first = ask(member, "北极熊主要吃什么？")
    assert cited_titles(first) == {BEARS_TITLE}
    conversation = by_type(first, "done").data["conversation_id"]
    second = ask(member, "它的皮肤是什么颜色？", conversation_id=conversation)
    understanding = by_type(second, "understanding").data
    assert BEARS_TITLE in understanding["rewritten"] and understanding["resolved"]
    assert cited_titles(second) == {BEARS_TITLE}
    assert "黑色" in by_type(second, "done").data["answer"]


def test_the_conversation_context_names_the_last_question_answer_and_sources(member, kb):
    done = by_type(ask(member, QUESTION), "done").data
    from kb.access import readable_kb_ids

    context = selectors.conversation_context(conversation=Conversation.objects.get(pk=done["conversation_id"]),
                                             kb_ids=readable_kb_ids(member))
    assert context.previous.question == QUESTION and context.previous.answer == done["answer"]
    assert context.previous.sources[0].title == HANDBOOK_TITLE and context.previous.rewritten


@pytest.mark.parametrize("question,phrase", [("公司的股票期权怎么行权？", "知识库中没有找到"),
                                             ("How do employee stock options vest?", "does not contain")])
def test_an_unanswerable_question_abstains_in_its_language_with_related_sources(member, kb, question, phrase):
    events = ask(member, question)
    start, done = by_type(events, "start").data, by_type(events, "done").data
    assert start["no_evidence"] is True
    assert phrase in done["answer"] and done["citations"] == []
    assert done["confidence_band"] == "none" and done["low_confidence"] is True
    assert start["sources"] and all(s["related"] for s in start["sources"])


def test_an_answerable_question_is_not_flagged_and_its_band_agrees(member, kb):
    events = ask(member, QUESTION)
    start, done = by_type(events, "start").data, by_type(events, "done").data
    assert start["no_evidence"] is False and start["low_confidence"] is False
    assert done["confidence_band"] in ("high", "medium") and done["low_confidence"] is False
    assert 0 < done["confidence_score"] <= 1


@pytest.fixture
def remote(settings, scripted_openai):
    settings.OPENAI_API_KEY = "test-key"
    settings.OPENAI_BASE_URL = scripted_openai.base_url
    settings.LLM_TIMEOUT_SECONDS = 10  # the scripted server answers at once; a loaded machine must not time it out
    reset_backends()
    scripted_openai.respond_with(lambda body: "{}")
    yield scripted_openai
    reset_backends()


def test_with_a_model_the_small_model_rewrite_is_used_and_sees_the_last_sources(member, kb, remote):
    remote.script(["北极熊以环斑海豹为主要食物 [1]。"], model="qwen-plus")
    conversation = by_type(ask(member, "北极熊主要吃什么？"), "done").data["conversation_id"]
    remote.script([json.dumps({"rewritten": "北极熊的皮肤是什么颜色？", "scope": "KNOWLEDGE"}, ensure_ascii=False)],
                  model="qwen-turbo")
    remote.script(["北极熊的皮肤是黑色的 [1]。"], model="qwen-plus")
    events = ask(member, "它的皮肤呢？", conversation_id=conversation)
    assert by_type(events, "understanding").data["rewritten"] == "北极熊的皮肤是什么颜色？"
    classifier_call = next(r for r in remote.requests[::-1] if r["model"] == "qwen-turbo")
    assert BEARS_TITLE in classifier_call["messages"][1]["content"]
    assert cited_titles(events) == {BEARS_TITLE}


def test_with_a_model_an_unresolved_rewrite_falls_back_to_the_offline_one(member, kb, remote):
    remote.script(["北极熊以环斑海豹为主要食物 [1]。"], model="qwen-plus")
    conversation = by_type(ask(member, "北极熊主要吃什么？"), "done").data["conversation_id"]
    remote.script([json.dumps({"rewritten": "它的皮肤是什么颜色？", "scope": "KNOWLEDGE"}, ensure_ascii=False)],
                  model="qwen-turbo")
    remote.script(["北极熊的皮肤是黑色的 [1]。"], model="qwen-plus")
    events = ask(member, "它的皮肤是什么颜色？", conversation_id=conversation)
    assert by_type(events, "understanding").data["rewritten"] == f"{BEARS_TITLE}的皮肤是什么颜色？"


def test_with_a_model_weak_evidence_reaches_it_under_the_low_confidence_prompt(member, kb, remote):
    # Offline this abstains; a model can tell what the documents do not cover, so it gets the question.
    remote.script(["参考资料中没有关于股票期权的内容。"], model="qwen-plus")
    events = ask(member, "公司的股票期权怎么行权？")
    start = by_type(events, "start").data
    assert start["no_evidence"] is False and start["low_confidence"] is True
    answer_request = next(r for r in remote.requests if r["model"] == "qwen-plus" and r.get("stream"))
    assert "相关性偏低" in answer_request["messages"][0]["content"]
    assert by_type(events, "done").data["confidence_band"] in ("low", "none")
