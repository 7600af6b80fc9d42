"""Conversation and Message persistence: titles, ordering, cascade."""
from __future__ import annotations

import pytest

from chat import services
from chat.models import Message, MessageStatus

pytestmark = pytest.mark.django_db


def test_it_titles_a_conversation_with_the_cut_first_question(member):
    conversation = services.conversation_start(user=member, question="  这是一个\n很长很长的问题" + "啊" * 80)
    assert conversation.title.startswith("这是一个 很长很长的问题")
    assert len(conversation.title) == services.TITLE_CHARS
    assert conversation.title.endswith("…")


def test_messages_are_ordered_and_deleted_with_their_conversation(member):
    conversation = services.conversation_start(user=member, question="q")
    services.message_add_question(conversation=conversation, content="q")
    services.message_add_answer(conversation=conversation, content="a [1]", citations=[{"index": 1}],
                                retrieval_log={"route": {"mode": "RULE_PLANNER"}}, confidence_score=0.5,
                                confidence_band="MEDIUM")
    roles = list(conversation.messages.values_list("role", flat=True))
    assert roles == ["user", "assistant"]
    services.conversation_delete(conversation=conversation)
    assert Message.objects.count() == 0


def test_a_failed_answer_keeps_its_partial_text_and_error(member):
    conversation = services.conversation_start(user=member, question="q")
    saved = services.message_add_answer(conversation=conversation, content="partial", status=MessageStatus.ERROR,
                                        error="llm_timeout: slow")
    saved.refresh_from_db()
    assert (saved.status, saved.content, saved.error) == ("error", "partial", "llm_timeout: slow")
