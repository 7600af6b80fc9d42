"""An upload that committed is never undone by what follows it; a failed document takes a new upload's file."""
from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from docmind import env
from kb.models import Document, DocumentStatus
from kb.services import document_create, document_mark_failed

URL = "/api/kb/documents/"
TEXT = "报销流程：员工提交发票，经理审批，财务付款。".encode()


# Transactional, so that the after-commit hooks run where they do in production: inside the upload
# request, after its commit. (Not serialized_rollback: that must not follow a plain transactional test
# such as config_admin's, and this one restores nothing it needs.)
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("ignore_errors", [True, False], ids=["docmind-cache-config", "strict-cache-config"])
def test_an_upload_while_redis_is_down_keeps_its_row_and_its_file(editor_client, kb_index, own_redis, settings,
                                                                   ignore_errors):
    # Also with an operator's own cache settings that let Redis errors raise.
    config = env.cache_config(own_redis.url)
    config["default"]["OPTIONS"]["IGNORE_EXCEPTIONS"] = ignore_errors
    settings.CACHES = config
    own_redis.stop()
    response = editor_client.post(URL, {"file": SimpleUploadedFile("报销.txt", TEXT)}, format="multipart")
    assert response.status_code == 202
    document = Document.objects.get(pk=response.json()["id"])
    assert document.status == DocumentStatus.PENDING
    assert document.file.storage.exists(document.file.name)
    with document.file.open("rb") as handle:
        assert handle.read() == TEXT


@pytest.mark.django_db
def test_reuploading_a_failed_document_whose_file_is_gone_stores_the_new_file(
        kb_index, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        document, created = document_create(uploaded_file=SimpleUploadedFile("报销.txt", TEXT))
    assert created
    old_name = document.file.name
    document.file.storage.delete(old_name)  # lost, e.g. by the old upload handler's cleanup
    document_mark_failed(document_id=document.pk, reason="FileNotFoundError")

    with django_capture_on_commit_callbacks(execute=True):
        again, created = document_create(uploaded_file=SimpleUploadedFile("报销.txt", TEXT))
    assert (again.pk, created, again.status) == (document.pk, False, DocumentStatus.PENDING)
    with again.file.open("rb") as handle:
        assert handle.read() == TEXT


@pytest.mark.django_db
def test_reuploading_a_failed_document_replaces_and_removes_the_old_file(
        kb_index, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        document, _ = document_create(uploaded_file=SimpleUploadedFile("a.txt", TEXT))
    old_name = document.file.name
    document_mark_failed(document_id=document.pk, reason="embedding service down")
    with django_capture_on_commit_callbacks(execute=True):
        again, _ = document_create(uploaded_file=SimpleUploadedFile("a.txt", TEXT))
    assert again.file.storage.exists(again.file.name)
    assert not again.file.storage.exists(old_name)
    assert Document.objects.count() == 1


@pytest.mark.django_db
def test_reuploading_a_ready_document_keeps_its_file(kb_index, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        document, _ = document_create(uploaded_file=SimpleUploadedFile("a.txt", TEXT))
    again, created = document_create(uploaded_file=SimpleUploadedFile("b.txt", TEXT))
    assert not created and again.file.name == document.file.name
