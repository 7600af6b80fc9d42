"""Failure reasons and retrieval traces a member sees carry no server path; the log keeps the detail."""
import logging

import pytest
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.core.files.base import ContentFile

from chat.pipeline.payloads import retrieval
from kb.citation_links import CitationLinks
from kb.ingestion import worker
from kb.models import Document, DocumentStatus
from kb.retrieval.types import Evidence, Grade, GradeResult
from kb.services import document_create, document_mark_failed

# The reasons are asserted as stored, in English: the API shows them in the request's language (Chinese by default).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("english")]


def test_a_missing_stored_file_fails_with_a_reason_but_no_path(kb_index, member_client, caplog):
    upload = ContentFile(("一段正文。" * 50).encode(), name="notes.txt")
    document, _ = document_create(uploaded_file=upload, domain="general")
    stored = document.file.path
    document.file.storage.delete(document.file.name)
    with caplog.at_level(logging.ERROR, logger="kb.ingestion.worker"):
        worker.process_pending_documents()
    document.refresh_from_db()
    assert document.status == DocumentStatus.FAILED
    assert "FileNotFoundError" in document.error and "/" not in document.error
    assert stored in caplog.text  # the operator still gets the path
    shown = member_client.get(f"/api/kb/documents/{document.pk}/").json()["error"]
    assert shown == document.error and str(settings.MEDIA_ROOT) not in shown


def test_any_reason_given_to_the_service_loses_its_paths(kb_index):
    document, _ = document_create(uploaded_file=ContentFile(("正文。" * 50).encode(), name="a.txt"), domain="general")
    document_mark_failed(document_id=document.pk, reason="the PDF could not be read (OSError: /srv/docmind/x/y.pdf)")
    document.refresh_from_db()
    assert document.error == "the PDF could not be read (OSError: <server path>)"


def test_an_old_reason_with_a_path_is_shown_without_it(kb_index, member_client):
    document, _ = document_create(uploaded_file=ContentFile(("正文。" * 50).encode(), name="b.txt"), domain="general")
    Document.objects.filter(pk=document.pk).update(
        status=DocumentStatus.FAILED, error="FileNotFoundError: [Errno 2] No such file: '/srv/data/media/b.txt'")
    listed = member_client.get("/api/kb/documents/").json()["results"]
    assert [d["error"] for d in listed if d["id"] == document.pk] == [
        "FileNotFoundError: [Errno 2] No such file: '<server path>'"]


def test_the_retrieval_event_trace_has_no_server_paths():
    grade = GradeResult(grade=Grade.LOW, rerank_top1=0.0, lex_coverage=0.0, kb_entity_weak=True,
                        web_compensation_needed=False)
    evidence = Evidence(chunks=(), grade=grade, trace=(
        "vector retriever failed: VectorStoreError: cannot open the vector store at /srv/data/milvus.db: busy",))
    assert retrieval(evidence, links=CitationLinks(AnonymousUser())).data["trace"] == [
        "vector retriever failed: VectorStoreError: cannot open the vector store at <server path>: busy"]
