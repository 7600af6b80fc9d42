"""The review queue: thumbs-down and weak answers land there for the editors of their base, who decide."""
from __future__ import annotations

import pytest
from django.core.files.base import ContentFile
from rest_framework.test import APIClient

from chat import services as chat_services
from curation.models import QaPair
from kb.models import Document, KnowledgeBase
from kb.services import kb_create
from review.models import ReviewItem

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_embedding_model(monkeypatch):
    """Curating embeds the question: a fixed vector keeps these tests about the queue, not the model."""
    import numpy as np

    class Fixed:
        name, dim = "fixed", 4

        def embed_query(self, text):
            return np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)

    monkeypatch.setattr("docmind.backends.get_embedder", lambda: Fixed())


def _document(kb: KnowledgeBase, title: str) -> Document:
    return Document.objects.create(title=title, kb=kb, file_type="txt", checksum=title, status="ready",
                                   file=ContentFile(b"x", name=f"{title}.txt"))


def _answer(user, *, document: Document | None, band: str = "high", question: str = "退款多久到账？"):
    conversation = chat_services.conversation_start(user=user, question=question)
    chat_services.message_add_question(conversation=conversation, content=question)
    cards = [{"chunk_id": "7", "document_id": document.pk, "document_title": document.title,
              "content": "三个工作日", "source": "KB"}] if document else []
    return chat_services.message_add_answer(
        conversation=conversation, content="三个工作日内到账[1]", confidence_score=0.2, confidence_band=band,
        retrieval_log={"kb_chunks": cards, "kb_ids": [document.kb_id] if document else []})


def test_a_thumbs_down_lands_in_the_queue_with_its_reason_question_answer_and_evidence(
        member, settings, tmp_path, django_capture_on_commit_callbacks):
    settings.MEDIA_ROOT = tmp_path
    document = _document(KnowledgeBase.objects.default(), "退款规则")
    with django_capture_on_commit_callbacks(execute=True):
        answer = _answer(member, document=document)
    assert not ReviewItem.objects.exists()  # a confident answer is not flagged by itself
    with django_capture_on_commit_callbacks(execute=True):
        chat_services.message_feedback_set(user=member, message=answer, rating="down", comment="规则已改")
    item = ReviewItem.objects.get()
    assert (item.reason, item.comment, item.question, item.kb_id) == ("thumbs_down", "规则已改", "退款多久到账？",
                                                                      document.kb_id)
    assert item.evidence[0]["document_id"] == document.pk and item.confidence_band == "high"


@pytest.mark.parametrize(("band", "reason"), [("low", "low"), ("none", "not_found")])
def test_an_answer_flagged_low_or_not_found_lands_in_the_queue(member, settings, tmp_path, band, reason,
                                                                django_capture_on_commit_callbacks):
    settings.MEDIA_ROOT = tmp_path
    document = _document(KnowledgeBase.objects.default(), "退款规则")
    with django_capture_on_commit_callbacks(execute=True):
        _answer(member, document=document if band == "low" else None, band=band)
    if band == "none":
        assert not ReviewItem.objects.exists()  # no base was searched, so no editor owns it
        with django_capture_on_commit_callbacks(execute=True):
            conversation = chat_services.conversation_start(user=member, question="q")
            chat_services.message_add_question(conversation=conversation, content="没有答案的问题")
            chat_services.message_add_answer(conversation=conversation, content="资料里没有", confidence_band="none",
                                             retrieval_log={"kb_chunks": [],
                                                            "kb_ids": [KnowledgeBase.objects.default().pk]})
    assert ReviewItem.objects.get().reason == reason


def test_members_see_no_queue_and_editors_only_their_bases(member, kb_editor, admin_user, settings, tmp_path,
                                                           django_capture_on_commit_callbacks):
    settings.MEDIA_ROOT = tmp_path
    default = KnowledgeBase.objects.default()
    secret = kb_create(name="secret", owner=admin_user)
    with django_capture_on_commit_callbacks(execute=True):
        _answer(member, document=_document(default, "公开"), band="low")
        _answer(admin_user, document=_document(secret, "机密"), band="low")
    clients = {}
    for name, user in (("member", member), ("editor", kb_editor), ("admin", admin_user)):
        clients[name] = APIClient()
        clients[name].force_authenticate(user)
    assert clients["member"].get("/api/reviews/").status_code == 403
    editor_view = clients["editor"].get("/api/reviews/?status=open").json()
    assert [r["kb"] for r in editor_view["results"]] == [default.pk]
    assert clients["admin"].get("/api/reviews/").json()["count"] == 2
    hidden = ReviewItem.objects.get(kb=secret)
    assert clients["editor"].post(f"/api/reviews/{hidden.pk}/resolve/", {"action": "dismiss"},
                                  format="json").status_code == 404


def test_curating_an_item_writes_a_curated_answer_of_its_base_and_closes_it(
        member, kb_editor, settings, tmp_path, django_capture_on_commit_callbacks):
    settings.MEDIA_ROOT = tmp_path
    document = _document(KnowledgeBase.objects.default(), "退款规则")
    with django_capture_on_commit_callbacks(execute=True):
        _answer(member, document=document, band="low")
    item = ReviewItem.objects.get()
    client = APIClient()
    client.force_authenticate(kb_editor)
    refused = client.post(f"/api/reviews/{item.pk}/resolve/", {"action": "curate"}, format="json")
    assert refused.status_code == 400 and not QaPair.objects.exists()
    done = client.post(f"/api/reviews/{item.pk}/resolve/", {"action": "curate", "answer": "五个工作日内到账。"},
                       format="json")
    assert done.status_code == 200 and done.json()["status"] == "curated"
    pair = QaPair.objects.get()
    assert (pair.kb_id, pair.question, pair.answer, pair.author) == (document.kb_id, "退款多久到账？",
                                                                     "五个工作日内到账。", kb_editor)
    assert list(pair.documents.values_list("pk", flat=True)) == [document.pk]
    assert client.get("/api/reviews/?status=open").json()["count"] == 0


def test_a_bad_filter_is_a_400(kb_editor):
    client = APIClient()
    client.force_authenticate(kb_editor)
    assert client.get("/api/reviews/?status=later").status_code == 400
    assert client.get("/api/reviews/?since=yesterday").status_code == 400
    assert client.get("/api/reviews/?until=2026-02-30").status_code == 400  # well-formed, impossible


def _cited_answer(user, document: Document, question: str = "退款多久到账？"):
    conversation = chat_services.conversation_start(user=user, question=question)
    chat_services.message_add_question(conversation=conversation, content=question)
    card = {"chunk_id": "7", "document_id": document.pk, "document_title": document.title, "content": "三个工作日"}
    return chat_services.message_add_answer(
        conversation=conversation, content="三个工作日内到账[1]", confidence_score=0.2, confidence_band="low",
        citations=[{"index": 1, "chunk_id": "7", "document_id": document.pk, "document_title": document.title}],
        retrieval_log={"kb_chunks": [card], "kb_ids": [document.kb_id]})


def test_an_editor_adds_a_queued_question_to_its_bases_evaluation_set(
        member, kb_editor, settings, tmp_path, django_capture_on_commit_callbacks):
    from evals.models import EvalSet

    settings.MEDIA_ROOT = tmp_path
    document = _document(KnowledgeBase.objects.default(), "退款规则")
    with django_capture_on_commit_callbacks(execute=True):
        _cited_answer(member, document)
    item = ReviewItem.objects.get()
    client = APIClient()
    client.force_authenticate(kb_editor)
    response = client.post(f"/api/reviews/{item.pk}/add-to-eval/", {"answers": [["五个工作日"]]}, format="json")
    assert response.status_code == 201, response.content
    eval_set = EvalSet.objects.get(pk=response.json()["set"]["id"])
    added = eval_set.items.get()
    assert (eval_set.kb_id, added.question, added.answers, added.documents) == (
        document.kb_id, "退款多久到账？", [["五个工作日"]], ["退款规则"])
    item.refresh_from_db()
    assert item.status == "open"  # adding to a set is not a decision on the answer
    chosen = EvalSet.objects.create(kb=document.kb, name="chosen")
    assert client.post(f"/api/reviews/{item.pk}/add-to-eval/", {"set": chosen.pk},
                       format="json").status_code == 201
    assert chosen.items.get().documents == ["退款规则"]


def test_members_cannot_add_queued_questions_and_editors_not_into_sets_of_other_bases(
        member, kb_editor, admin_user, settings, tmp_path, django_capture_on_commit_callbacks):
    from evals.models import EvalSet

    settings.MEDIA_ROOT = tmp_path
    document = _document(KnowledgeBase.objects.default(), "退款规则")
    with django_capture_on_commit_callbacks(execute=True):
        _cited_answer(member, document)
    item = ReviewItem.objects.get()
    secret = EvalSet.objects.create(kb=kb_create(name="secret", owner=admin_user), name="secret set")
    clients = {}
    for name, user in (("member", member), ("editor", kb_editor)):
        clients[name] = APIClient()
        clients[name].force_authenticate(user)
    assert clients["member"].post(f"/api/reviews/{item.pk}/add-to-eval/", {}, format="json").status_code == 403
    assert clients["editor"].post(f"/api/reviews/{item.pk}/add-to-eval/", {"set": secret.pk},
                                  format="json").status_code == 404
    assert not secret.items.exists() and not EvalSet.objects.exclude(pk=secret.pk).exists()


def test_the_admin_action_adds_the_selected_questions_to_their_bases_sets(
        member, kb_editor, settings, tmp_path, django_capture_on_commit_callbacks):
    from django.test import Client

    from evals.models import EvalItem

    settings.MEDIA_ROOT = tmp_path
    document = _document(KnowledgeBase.objects.default(), "退款规则")
    with django_capture_on_commit_callbacks(execute=True):
        _cited_answer(member, document)
        _cited_answer(member, document, question="退款找谁？")
    client = Client()
    client.force_login(kb_editor)
    response = client.post("/admin/review/reviewitem/", {
        "action": "add_to_eval", "_selected_action": list(ReviewItem.objects.values_list("pk", flat=True))},
        follow=True)
    assert response.status_code == 200
    assert sorted(EvalItem.objects.values_list("question", flat=True)) == ["退款多久到账？", "退款找谁？"]
    assert "/eval/sets/" in response.content.decode()
