"""Deleting documents in the admin, one or many, goes through document_delete: chunks, vectors, BM25 and file."""
from __future__ import annotations

import pytest

from docmind.indexes.stores import get_lexical_index, get_vector_store
from kb.ingestion.worker import process_pending_documents
from kb.models import Chunk, ChunkLevel, Document, KnowledgeDomain
from kb.services import document_ingest_text, kb_create, kb_grant

# The messages are asserted in English: the default language is Chinese (zh-hans has its own test).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("english")]

CHANGELIST = "/admin/kb/document/"
TEXTS = {"年假": "公司的年假制度规定员工每年享有十五天带薪年假。年假需要提前一周申请。",
         "报销": "差旅报销需要在出差结束后十个工作日内提交发票。报销单由部门经理审批。",
         "门禁": "访客进入办公区需要前台登记并领取临时门禁卡。门禁卡当天归还。"}


def _indexed(*titles: str, kb=None) -> list[Document]:
    documents = [document_ingest_text(title=t, text=TEXTS[t], domain="hr", kb=kb)[0] for t in titles]
    process_pending_documents()
    return [Document.objects.get(pk=d.pk) for d in documents]


def _children(document: Document) -> list[int]:
    return list(Chunk.objects.filter(document=document, level=ChunkLevel.CHILD).values_list("id", flat=True))


def _assert_gone(document: Document, child_ids: list[int], word: str) -> None:
    assert not Document.objects.filter(pk=document.pk).exists()
    assert not Chunk.objects.filter(document_id=document.pk).exists()
    assert get_vector_store().fetch(child_ids) == {}
    assert get_lexical_index().search(word, k=10, document_ids=[document.pk]) == []
    assert not document.file.storage.exists(document.file.name)


def test_the_confirmation_page_asks_for_no_chunk_permission_and_counts_the_chunks(client, admin_user, kb_index):
    [document] = _indexed("年假")
    client.force_login(admin_user)
    response = client.get(f"{CHANGELIST}{document.pk}/delete/")
    assert response.status_code == 200
    assert not response.context["perms_lacking"]
    counts = dict(response.context["model_count"])
    assert counts["documents"] == 1 and counts["chunks"] == Chunk.objects.filter(document=document).count() > 0


def test_a_superuser_deletes_one_document_with_its_chunks_vectors_and_bm25_entries(
        client, django_user_model, kb_index, django_capture_on_commit_callbacks):
    [document, kept] = _indexed("年假", "报销")
    child_ids = _children(document)
    assert child_ids and get_vector_store().fetch(child_ids)
    assert get_lexical_index().search("年假", k=10, document_ids=[document.pk])
    client.force_login(django_user_model.objects.create_superuser("root", password="pw-root"))
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"{CHANGELIST}{document.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302 and response["Location"] == CHANGELIST
    _assert_gone(document, child_ids, "年假")
    assert get_vector_store().fetch(_children(kept))  # the other document is untouched


def test_an_admin_deletes_several_documents_at_once_through_the_service(
        client, admin_user, kb_index, django_capture_on_commit_callbacks):
    first, second, kept = _indexed("年假", "报销", "门禁")
    children = {first.pk: _children(first), second.pk: _children(second)}
    assert get_lexical_index().search("报销", k=10, document_ids=[second.pk])
    client.force_login(admin_user)
    selection = {"action": "delete_selected", "_selected_action": [first.pk, second.pk]}
    confirm = client.post(CHANGELIST, selection)
    assert confirm.status_code == 200 and not confirm.context["perms_lacking"]
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(CHANGELIST, {**selection, "post": "yes"}, follow=True)
    assert any("Successfully deleted 2" in str(m) for m in response.context["messages"])
    _assert_gone(first, children[first.pk], "年假")
    _assert_gone(second, children[second.pk], "报销")
    assert list(Document.objects.values_list("pk", flat=True)) == [kept.pk]


def test_a_kb_editor_deletes_in_a_base_it_edits_but_not_in_one_it_only_reads(
        client, kb_editor, kb_index, django_capture_on_commit_callbacks):
    mine, theirs = kb_create(name="我的库", owner=kb_editor), kb_create(name="只读库")
    kb_grant(kb=theirs, user=kb_editor, access="read")
    [own] = _indexed("年假", kb=mine)
    [readable] = _indexed("报销", kb=theirs)
    client.force_login(kb_editor)
    assert client.post(f"{CHANGELIST}{readable.pk}/delete/", {"post": "yes"}).status_code == 403
    refused = client.post(CHANGELIST, {"action": "delete_selected", "_selected_action": [own.pk, readable.pk],
                                       "post": "yes"})
    assert refused.status_code == 403
    assert Document.objects.count() == 2
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(CHANGELIST, {"action": "delete_selected", "_selected_action": [own.pk],
                                            "post": "yes"})
    assert response.status_code == 302
    assert list(Document.objects.values_list("pk", flat=True)) == [readable.pk]
    # The domain its last document left went with it; the other base's is untouched.
    assert list(KnowledgeDomain.objects.values_list("kb__name", "domain_id")) == [("只读库", "hr")]
