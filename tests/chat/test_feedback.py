"""Answer feedback: one verdict per reader and answer, own answers only, visible to staff beside the trace."""
from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient

from chat import services
from chat.models import MessageFeedback

pytestmark = pytest.mark.django_db


@pytest.fixture
def answer(member):
    conversation = services.conversation_start(user=member, question="退款多久到账？")
    services.message_add_question(conversation=conversation, content="退款多久到账？")
    return services.message_add_answer(conversation=conversation, content="三个工作日内到账[1]",
                                       retrieval_log={"route": {"mode": "RULE_PLANNER"}})


def test_a_thumbs_down_with_a_comment_is_stored_and_a_second_verdict_replaces_it(member_client, answer):
    url = f"/api/messages/{answer.pk}/feedback/"
    first = member_client.put(url, {"rating": "down", "comment": "  引用的是旧规则  "}, format="json")
    assert first.status_code == 200
    assert first.json() == {"rating": "down", "comment": "引用的是旧规则"}
    member_client.put(url, {"rating": "up"}, format="json")
    rows = list(MessageFeedback.objects.filter(message=answer))
    assert [(r.rating, r.comment) for r in rows] == [("up", "")]


def test_the_conversation_detail_carries_the_callers_verdict(member_client, answer):
    member_client.put(f"/api/messages/{answer.pk}/feedback/", {"rating": "up"}, format="json")
    detail = member_client.get(f"/api/conversations/{answer.conversation_id}/").json()
    verdicts = {m["role"]: m["feedback"] for m in detail["messages"]}
    assert verdicts == {"user": None, "assistant": {"rating": "up", "comment": ""}}


def test_taking_feedback_back_deletes_it(member_client, answer):
    member_client.put(f"/api/messages/{answer.pk}/feedback/", {"rating": "up"}, format="json")
    assert member_client.delete(f"/api/messages/{answer.pk}/feedback/").status_code == 204
    assert not MessageFeedback.objects.exists()


@pytest.mark.parametrize("body", [{"rating": "meh"}, {}, {"rating": "up", "comment": "x" * 2001}])
def test_a_malformed_verdict_is_a_400_and_stores_nothing(member_client, answer, body):
    response = member_client.put(f"/api/messages/{answer.pk}/feedback/", body, format="json")
    assert response.status_code == 400
    assert not MessageFeedback.objects.exists()


def test_another_users_answer_and_a_question_are_404(other_member, answer):
    bob = APIClient()
    bob.force_authenticate(other_member)
    assert bob.put(f"/api/messages/{answer.pk}/feedback/", {"rating": "down"}, format="json").status_code == 404
    question = answer.conversation.messages.get(role="user")
    alice = APIClient()
    alice.force_authenticate(answer.conversation.user)
    assert alice.put(f"/api/messages/{question.pk}/feedback/", {"rating": "up"}, format="json").status_code == 404
    assert not MessageFeedback.objects.exists()


def test_staff_find_bad_answers_in_the_admin_with_a_link_to_the_trace(admin_user, member_client, answer):
    member_client.put(f"/api/messages/{answer.pk}/feedback/", {"rating": "down", "comment": "答非所问"},
                      format="json")
    staff = Client()
    staff.force_login(admin_user)
    listing = staff.get("/admin/chat/messagefeedback/?rating__exact=down").content.decode()
    assert "答非所问" in listing
    assert f"/admin/chat/message/{answer.pk}/change/" in listing
    page = staff.get(f"/admin/chat/message/{answer.pk}/change/").content.decode()
    assert "答非所问" in page and "RULE_PLANNER" in page
