"""`/api/conversations/`: the caller's own only; another user's id is a 404."""
from __future__ import annotations

import pytest

from chat import services

pytestmark = pytest.mark.django_db


@pytest.fixture
def alices(member):
    conversation = services.conversation_start(user=member, question="alice asks")
    services.message_add_question(conversation=conversation, content="alice asks")
    services.message_add_answer(conversation=conversation, content="answer [1]", citations=[{"index": 1}])
    return conversation


def test_list_shows_only_the_callers_conversations(member_client, alices, other_member):
    services.conversation_start(user=other_member, question="bob asks")
    body = member_client.get("/api/conversations/").json()
    assert [c["title"] for c in body["results"]] == ["alice asks"]
    assert body["results"][0]["message_count"] == 2


def test_detail_includes_messages(member_client, alices):
    body = member_client.get(f"/api/conversations/{alices.pk}/").json()
    assert [m["role"] for m in body["messages"]] == ["user", "assistant"]
    # Read back with the caller's reader link: none for a citation that names no document.
    assert body["messages"][1]["citations"] == [{"index": 1, "reader_url": None}]


def test_an_answer_saved_with_camel_case_log_keys_reads_back_in_snake_case(member_client, alices):
    # Saved while the trace's keys were partly camelCase: the reopened conversation still shows its trace.
    services.message_add_answer(conversation=alices, content="旧的回答", retrieval_log={
        "route": {"mode": "RULE_PLANNER", "reason": "simple", "fallbackNote": "no document selected"},
        "grade": {"grade": "HIGH", "rerankTop1": 0.9, "lexCoverage": 1.0, "kbEntityWeak": False,
                  "webCompensationNeeded": False, "reason": ""},
        "classification": {"rewritten": "旧的问题", "isAmbiguous": False, "scopeConfidence": 0.9}})
    log = member_client.get(f"/api/conversations/{alices.pk}/").json()["messages"][-1]["retrieval_log"]
    assert log["route"]["fallback_note"] == "no document selected" and "fallbackNote" not in log["route"]
    assert (log["grade"]["rerank_top1"], log["grade"]["lex_coverage"]) == (0.9, 1.0)
    assert log["classification"] == {"rewritten": "旧的问题", "is_ambiguous": False, "scope_confidence": 0.9}


@pytest.mark.parametrize("method", ["get", "delete", "patch"])
def test_another_users_conversation_is_404(client_for_bob, alices, method):
    response = getattr(client_for_bob, method)(f"/api/conversations/{alices.pk}/", {"title": "x"}, format="json")
    assert response.status_code == 404
    alices.refresh_from_db()
    assert alices.title == "alice asks"


def test_rename_and_delete(member_client, alices):
    response = member_client.patch(f"/api/conversations/{alices.pk}/", {"title": "  新标题 "}, format="json")
    assert response.status_code == 200 and response.json()["title"] == "新标题"
    assert member_client.patch(f"/api/conversations/{alices.pk}/", {"title": ""}, format="json").status_code == 400
    for title in ("", "a\x1bb"):  # the empty form field is not skipped, and control characters are refused
        refused = member_client.patch(f"/api/conversations/{alices.pk}/", {"title": title}, format="multipart")
        assert refused.status_code == 400 and "title" in refused.json()["fields"]
    assert member_client.delete(f"/api/conversations/{alices.pk}/").status_code == 204
    assert member_client.get(f"/api/conversations/{alices.pk}/").status_code == 404


def test_anonymous_is_rejected(client, alices):
    assert client.get("/api/conversations/").status_code in (401, 403)


@pytest.fixture
def client_for_bob(other_member):
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(user=other_member)
    return api
