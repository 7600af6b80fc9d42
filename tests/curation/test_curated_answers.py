"""Curated answers: written through the API by a base's editors, served in chat to the base's readers only,
labelled with author and date, citing the documents the pair names."""
from __future__ import annotations

import io
import threading

import pytest
from django.core.files.base import ContentFile
from rest_framework.test import APIClient

from chat.models import Message
from chat.pipeline import ChatPipeline
from curation import services
from curation.models import QaPair
from kb.models import Document, KnowledgeBase
from kb.services import kb_create
from tests.chat.chat_helpers import assert_events_follow_the_contract, by_type, types

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

QUESTION = "报销单要在多少天内提交？"
ANSWER = "报销单须在费用发生后三十天内提交；逾期请找财务总监审批。"


@pytest.fixture(autouse=True)
def fresh_cache():
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


def _client(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def ask(user, message, **kw):
    return list(ChatPipeline().run(user=user, message=message, cancel=threading.Event(), **kw))


def test_a_curated_pair_answers_its_question_labelled_with_author_and_date(member, kb_editor, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    default = KnowledgeBase.objects.default()
    document = Document.objects.create(title="报销制度", kb=default, file_type="txt", checksum="c1", status="ready",
                                       file=ContentFile(b"x", name="r.txt"))
    created = _client(kb_editor).post("/api/kb/qa-pairs/", {"kb": default.pk, "question": QUESTION,
                                                            "answer": ANSWER, "documents": [document.pk]},
                                      format="json")
    assert created.status_code == 201, created.json()
    events = ask(member, "报销单要在多少天内提交")
    assert_events_follow_the_contract(events)
    assert "retrieval" not in types(events)
    start, done = by_type(events, "start"), by_type(events, "done")
    assert start.data["curated"]["author"] == kb_editor.username and start.data["mode"] == "CURATED"
    assert done.data["answer"] == ANSWER and done.data["curated"]["updated_at"]
    assert [c["document_id"] for c in done.data["citations"]] == [document.pk]
    saved = Message.objects.get(pk=done.data["message_id"])
    assert saved.retrieval_log["curated"]["id"] == created.json()["id"]


def test_a_reader_of_another_base_never_gets_the_curated_answer(member, admin_user):
    secret = kb_create(name="finance-only", owner=admin_user)
    services.qa_pair_create(kb=secret, question=QUESTION, answer=ANSWER, author=admin_user)
    events = ask(member, QUESTION)
    assert "curated" not in by_type(events, "start").data
    assert ANSWER not in by_type(events, "done").data["answer"]


def test_a_deactivated_pair_is_no_longer_served(member, kb_editor):
    pair = services.qa_pair_create(kb=KnowledgeBase.objects.default(), question=QUESTION, answer=ANSWER,
                                   author=kb_editor)
    response = _client(kb_editor).patch(f"/api/kb/qa-pairs/{pair.pk}/", {"is_active": False}, format="json")
    assert response.status_code == 200 and response.json()["is_active"] is False
    assert "curated" not in by_type(ask(member, QUESTION), "start").data


def test_members_cannot_list_or_write_pairs_and_editors_only_in_their_bases(member, kb_editor, admin_user):
    secret = kb_create(name="hr-only", owner=admin_user)
    assert _client(member).get("/api/kb/qa-pairs/").status_code == 403
    assert _client(member).post("/api/kb/qa-pairs/", {"kb": KnowledgeBase.objects.default().pk, "question": "q",
                                                      "answer": "a"}, format="json").status_code == 403
    assert _client(kb_editor).post("/api/kb/qa-pairs/", {"kb": secret.pk, "question": "q", "answer": "a"},
                                   format="json").status_code == 404
    hidden = services.qa_pair_create(kb=secret, question="q", answer="a", author=admin_user)
    assert _client(kb_editor).get(f"/api/kb/qa-pairs/{hidden.pk}/").status_code == 404
    assert _client(kb_editor).get("/api/kb/qa-pairs/").json()["count"] == 0


def test_a_csv_import_stores_every_row_or_none(kb_editor):
    default = KnowledgeBase.objects.default()
    client = _client(kb_editor)
    good = io.BytesIO("question,answer\n年假几天？,十五天\nVPN 密码怎么改？,在自助门户修改\n".encode())
    good.name = "faq.csv"
    response = client.post("/api/kb/qa-pairs/import/", {"kb": default.pk, "file": good}, format="multipart")
    assert response.status_code == 201 and response.json() == {"created": 2}
    bad = io.BytesIO("question,answer\n有答案,是的\n没有答案,\n".encode())
    bad.name = "faq.csv"
    refused = client.post("/api/kb/qa-pairs/import/", {"kb": default.pk, "file": bad}, format="multipart")
    assert refused.status_code == 400 and "row 3" in refused.json()["error"]
    assert QaPair.objects.count() == 2
