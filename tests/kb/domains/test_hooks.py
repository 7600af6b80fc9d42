"""The knowledge map follows real ingestion and deletion, and the admin can regenerate a domain."""
from __future__ import annotations

import pytest
from django.test import Client

from kb.ingestion.worker import process_pending_documents
from kb.models import Document, KnowledgeDomain
from kb.services import document_delete, document_ingest_text

pytestmark = pytest.mark.django_db

TEXT = "# 年假规定\n员工入职满一年后享有五天年假。\n# 病假规定\n病假需提供医院证明。"


def test_ingestion_writes_covers_and_the_domain_map(kb_index, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        document, _ = document_ingest_text(title="休假制度", text=TEXT, domain="hr")
    process_pending_documents()
    document.refresh_from_db()
    assert document.metadata["covers"][:2] == ["年假规定", "病假规定"] and document.metadata["child_chunks"] >= 1
    row = KnowledgeDomain.objects.get(domain_id="hr")
    assert "年假规定" in row.when_to_retrieve and row.document_count == 1
    with django_capture_on_commit_callbacks(execute=True):
        document_delete(document=document)
    assert not KnowledgeDomain.objects.filter(domain_id="hr").exists()  # its map entry went with its last document


def test_the_admin_action_regenerates_a_domain(kb_index, admin_user, django_capture_on_commit_callbacks):
    admin_user.is_staff = admin_user.is_superuser = True
    admin_user.save()
    with django_capture_on_commit_callbacks(execute=True):
        document_ingest_text(title="休假制度", text=TEXT, domain="hr")
    process_pending_documents()
    Document.objects.update(metadata={})
    KnowledgeDomain.objects.filter(domain_id="hr").update(when_to_retrieve="", description="人事制度")
    client = Client()
    client.force_login(admin_user)
    row = KnowledgeDomain.objects.get(domain_id="hr")
    response = client.post("/admin/kb/knowledgedomain/", {"action": "regenerate_knowledge_map",
                                                          "_selected_action": [row.pk]})
    assert response.status_code == 302
    row.refresh_from_db()
    assert "年假规定" in row.when_to_retrieve and row.description == "人事制度"
    assert Document.objects.get().metadata["covers"]
