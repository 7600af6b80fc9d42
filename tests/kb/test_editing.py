"""Chunk editing: every revision kept with author and diff, any restorable, the new text found by both
indexes at once, and a citation of the old text still opened, marked edited since."""
from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from docmind.backends import get_embedder
from kb.ingestion.worker import process_pending_documents
from kb.models import Chunk, ChunkLevel, Document

pytestmark = pytest.mark.django_db

TEXT = "# 退款规则\n\n退款申请提交后，系统在三个工作日内原路退回。超过七天未到账，请联系客服并提供订单号。".encode()
NEW = "退款申请提交后，系统在十个工作日内退回到紫水晶钱包。"


@pytest.fixture
def child(editor_client, kb_index):
    body = editor_client.post("/api/kb/documents/", {"file": SimpleUploadedFile("refund.md", TEXT)},
                              format="multipart").json()
    process_pending_documents()
    document = Document.objects.get(pk=body["id"])
    return Chunk.objects.filter(document=document, level=ChunkLevel.CHILD).order_by("ordinal").first()


def test_an_edit_keeps_the_ingested_text_as_a_revision_and_search_finds_the_new_words(
        editor_client, kb_index, child, django_capture_on_commit_callbacks):
    before = child.content
    with django_capture_on_commit_callbacks(execute=True):
        response = editor_client.patch(f"/api/kb/chunks/{child.pk}/", {"content": NEW}, format="json")
    assert response.status_code == 200 and response.json()["content"] == NEW
    revisions = editor_client.get(f"/api/kb/chunks/{child.pk}/revisions/").json()
    assert [r["content"] for r in revisions] == [NEW, before]
    assert revisions[0]["author"] == "eddie" and "+" + NEW in revisions[0]["diff"]
    assert kb_index.lexical_search("紫水晶钱包", k=3)[0].chunk_id == str(child.pk)
    vector_hit = kb_index.vector_search(get_embedder().embed_query("十个工作日内退回到紫水晶钱包"), k=1)[0]
    assert vector_hit.chunk_id == str(child.pk) and vector_hit.content == NEW
    assert NEW in Chunk.objects.get(pk=child.parent_id).content  # what the answer step reads follows


def test_restoring_a_revision_makes_its_text_current_as_a_new_revision(editor_client, child,
                                                                       django_capture_on_commit_callbacks):
    before = child.content
    with django_capture_on_commit_callbacks(execute=True):
        editor_client.patch(f"/api/kb/chunks/{child.pk}/", {"content": NEW}, format="json")
    first = editor_client.get(f"/api/kb/chunks/{child.pk}/revisions/").json()[-1]["id"]
    with django_capture_on_commit_callbacks(execute=True):
        restored = editor_client.post(f"/api/kb/chunks/{child.pk}/revisions/{first}/restore/")
    assert restored.status_code == 200 and restored.json()["content"] == before
    assert len(editor_client.get(f"/api/kb/chunks/{child.pk}/revisions/").json()) == 3
    assert editor_client.post(f"/api/kb/chunks/{child.pk}/revisions/999999/restore/").status_code == 404


def test_a_citation_of_the_text_before_the_edit_opens_marked_edited_since(member, editor_client, child,
                                                                          django_capture_on_commit_callbacks):
    before = child.content
    with django_capture_on_commit_callbacks(execute=True):
        editor_client.patch(f"/api/kb/chunks/{child.pk}/", {"content": NEW}, format="json")
    browser = Client()
    browser.force_login(member)
    old = browser.get(f"/documents/{child.document_id}/?chunk={child.pk}&rev=0").content.decode()
    assert 'id="edited-since"' in old and before in old.split('id="edited-since"', 1)[1]
    latest = editor_client.get(f"/api/kb/chunks/{child.pk}/revisions/").json()[0]["id"]
    current = browser.get(f"/documents/{child.document_id}/?chunk={child.pk}&rev={latest}").content.decode()
    assert 'id="edited-since"' not in current


def test_members_cannot_edit_and_empty_text_is_refused(member_client, editor_client, child):
    assert member_client.patch(f"/api/kb/chunks/{child.pk}/", {"content": NEW}, format="json").status_code == 403
    assert editor_client.patch(f"/api/kb/chunks/{child.pk}/", {"content": "   "}, format="json").status_code == 400
    assert Chunk.objects.get(pk=child.pk).content == child.content
    assert editor_client.patch("/api/kb/chunks/99999999/", {"content": NEW}, format="json").status_code == 404


def test_an_editor_edits_a_chunk_in_the_admin_and_its_history_page_lists_the_revisions(
        kb_editor, child, django_capture_on_commit_callbacks):
    browser = Client()
    browser.force_login(kb_editor)
    url = f"/admin/kb/chunk/{child.pk}/change/"
    with django_capture_on_commit_callbacks(execute=True):
        response = browser.post(url, {"content": NEW})
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Chunk.objects.get(pk=child.pk).content == NEW
    history = browser.get(f"/admin/kb/chunk/{child.pk}/history/").content.decode()
    assert "ingested" in history and kb_editor.username in history
