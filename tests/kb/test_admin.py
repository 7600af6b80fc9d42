"""Uploading through the admin add form goes through document_create's validation."""
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from kb.models import Document, DocumentStatus

pytestmark = pytest.mark.django_db

ADD_URL = "/admin/kb/document/add/"


def _upload(client, name: str, content: bytes, **fields):
    return client.post(ADD_URL, {"file": SimpleUploadedFile(name, content), "title": "", "domain": "general",
                                 **fields})


def test_an_empty_file_is_refused_with_a_message(client, admin_user, kb_index):
    client.force_login(admin_user)
    response = _upload(client, "empty.md", b"")
    assert response.status_code == 200  # the form is shown again with its error
    assert response.context["adminform"].form.errors.as_data()["file"][0].code == "empty"
    assert not Document.objects.exists()


def test_an_unsupported_file_type_is_refused_with_the_services_message(client, admin_user, kb_index):
    client.force_login(admin_user)
    response = _upload(client, "tool.exe", b"MZ not a document")
    assert response.status_code == 200
    assert "unsupported file type" in response.content.decode()
    assert not Document.objects.exists()


def test_a_markdown_file_creates_a_pending_document(client, admin_user, kb_index):
    client.force_login(admin_user)
    response = _upload(client, "guide.md", "# 指南\n知识库支持 Markdown 文档。".encode(), title="指南")
    assert response.status_code == 302
    document = Document.objects.get()
    assert (document.title, document.domain, document.status) == ("指南", "general", DocumentStatus.PENDING)
    assert document.uploaded_by == admin_user
