"""Regenerate: the conversation's last question is answered again in place of its answer, not appended twice."""
from __future__ import annotations

import threading

import pytest

from chat.consumers import parse_frame
from chat.models import Message, MessageFeedback, MessageRole
from chat.pipeline import ChatPipeline
from tests.chat.chat_helpers import QUESTION, by_type, ingest_tiny_kb

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


def test_regenerating_replaces_the_last_answer_and_drops_its_feedback(member, kb):
    first = by_type(ask(member, QUESTION), "done").data
    conversation, answer_id = first["conversation_id"], first["message_id"]
    MessageFeedback.objects.create(message_id=answer_id, user=member, rating="down")
    again = ask(member, QUESTION, conversation_id=conversation, regenerate=True)
    done = by_type(again, "done").data
    assert done["conversation_id"] == conversation and done["message_id"] == answer_id
    assert not by_type(again, "start").data.get("cached")  # answered anew, not replayed from the answer cache
    rows = list(Message.objects.filter(conversation_id=conversation).order_by("id").values_list("role", "content"))
    assert rows == [(MessageRole.USER, QUESTION), (MessageRole.ASSISTANT, done["answer"])]
    assert not MessageFeedback.objects.filter(message_id=answer_id).exists()


def test_the_regenerated_turn_does_not_see_the_answer_it_replaces(member, kb):
    from chat.pipeline.turn import begin_turn
    from config_admin.conf import ai_config

    conversation = by_type(ask(member, QUESTION), "done").data["conversation_id"]
    turn = begin_turn(user=member, message=QUESTION, conversation_id=conversation, document_id=None,
                      snapshot=ai_config.snapshot(), regenerate=True)
    assert turn.history == [] and turn.replaces is not None and turn.question_message.content == QUESTION


def test_only_the_last_question_can_be_regenerated(member, kb):
    conversation = by_type(ask(member, QUESTION), "done").data["conversation_id"]
    refused = ask(member, "别的问题？", conversation_id=conversation, regenerate=True)
    assert by_type(refused, "error").data["code"] == "nothing_to_regenerate"
    assert Message.objects.filter(conversation_id=conversation).count() == 2
    assert by_type(ask(member, QUESTION, regenerate=True), "error").data["code"] == "nothing_to_regenerate"


def test_the_frame_takes_a_boolean_regenerate():
    assert parse_frame('{"type": "ask", "message": "q", "regenerate": true}')[1]["regenerate"] is True
    assert "regenerate" not in parse_frame('{"type": "ask", "message": "q"}')[1]
    with pytest.raises(ValueError, match="regenerate"):
        parse_frame('{"type": "ask", "message": "q", "regenerate": "yes"}')


def test_an_edit_rewrites_the_last_question_and_answers_it_in_place(member, kb):
    first = by_type(ask(member, QUESTION), "done").data
    conversation, answer_id = first["conversation_id"], first["message_id"]
    edited = QUESTION + "（请简短回答）"
    done = by_type(ask(member, edited, conversation_id=conversation, edit=True), "done").data
    assert done["message_id"] == answer_id
    rows = list(Message.objects.filter(conversation_id=conversation).order_by("id").values_list("role", "content"))
    assert rows == [(MessageRole.USER, edited), (MessageRole.ASSISTANT, done["answer"])]


def test_an_edit_without_a_conversation_is_refused_and_saves_nothing(member, kb):
    assert by_type(ask(member, QUESTION, edit=True), "error").data["code"] == "nothing_to_regenerate"
    assert not Message.objects.exists()


def test_the_frame_takes_a_boolean_edit():
    assert parse_frame('{"type": "ask", "message": "q", "edit": true}')[1]["edit"] is True
    with pytest.raises(ValueError, match="edit"):
        parse_frame('{"type": "ask", "message": "q", "edit": 1}')
