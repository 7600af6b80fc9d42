"""Chat services and selectors: rename, history shape, ownership."""
from __future__ import annotations

import pytest

from chat import selectors, services
from chat.models import Conversation, MessageStatus

pytestmark = pytest.mark.django_db


def test_it_rejects_an_empty_title(member):
    conversation = services.conversation_start(user=member, question="q")
    with pytest.raises(ValueError):
        services.conversation_rename(conversation=conversation, title="   ")


def test_history_skips_failed_answers_and_keeps_order(member):
    conversation = services.conversation_start(user=member, question="q1")
    services.message_add_question(conversation=conversation, content="q1")
    services.message_add_answer(conversation=conversation, content="a1")
    services.message_add_question(conversation=conversation, content="q2")
    services.message_add_answer(conversation=conversation, content="boom", status=MessageStatus.ERROR)
    history = selectors.conversation_history(conversation=conversation)
    assert history == [{"role": "user", "content": "q1"}, {"role": "assistant", "content": "a1"},
                       {"role": "user", "content": "q2"}]


def test_another_users_conversation_looks_unknown(member, other_member):
    conversation = services.conversation_start(user=member, question="q")
    with pytest.raises(Conversation.DoesNotExist):
        selectors.conversation_get(user=other_member, conversation_id=conversation.pk)
