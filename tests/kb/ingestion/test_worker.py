"""The DB-backed queue: atomic claim, progress to 100, interrupted jobs resumed or failed."""
from datetime import timedelta

import pytest
from django.core.files.base import ContentFile

from kb.ingestion import worker
from kb.models import Chunk, Document, DocumentStatus
from kb.services import document_claim, document_create, document_ingest_text

pytestmark = pytest.mark.django_db

TEXT = "向量检索把文本变成向量。BM25 按词频打分。两者融合效果更好。" * 30


def test_a_document_can_be_claimed_only_once(kb_index):
    document, _ = document_ingest_text(title="t", text=TEXT, domain="general")
    assert document_claim(document_id=document.pk) is True
    assert document_claim(document_id=document.pk) is False
    assert worker.claim_next() is None


def test_processing_reaches_ready_and_100_percent_with_vectors(kb_index):
    document, _ = document_ingest_text(title="t", text=TEXT, domain="general")
    assert worker.process_pending_documents() == 1
    document.refresh_from_db()
    assert (document.status, document.progress, document.error) == (DocumentStatus.READY, 100, "")
    children = Chunk.objects.filter(document=document, level=1)
    assert children.exists()
    assert not children.filter(vector_id__isnull=True).exists()
    assert Chunk.objects.filter(document=document, level=0, parent__isnull=True).exists()


def test_an_unparseable_file_fails_with_its_reason(kb_index):
    document, _ = document_create(uploaded_file=ContentFile(bytes(range(256)) * 4, name="x.txt"), domain="general")
    worker.process_pending_documents()
    document.refresh_from_db()
    assert document.status == DocumentStatus.FAILED
    assert "binary" in document.error
    assert not Chunk.objects.filter(document=document).exists()


def test_an_interrupted_job_is_resumed(kb_index):
    document, _ = document_ingest_text(title="t", text=TEXT, domain="general")
    document_claim(document_id=document.pk)  # a worker took it, then the process died
    assert worker.recover_interrupted(stale_after=timedelta(0)) == 1
    document.refresh_from_db()
    assert document.status == DocumentStatus.PENDING
    worker.process_pending_documents()
    document.refresh_from_db()
    assert document.status == DocumentStatus.READY


def test_a_job_interrupted_three_times_is_failed_with_the_reason(kb_index):
    document, _ = document_ingest_text(title="t", text=TEXT, domain="general")
    Document.objects.filter(pk=document.pk).update(status=DocumentStatus.PROCESSING, attempts=3)
    worker.recover_interrupted(stale_after=timedelta(0))
    document.refresh_from_db()
    assert document.status == DocumentStatus.FAILED
    assert "interrupted 3 times" in document.error


def test_a_live_job_is_not_taken_from_its_worker(kb_index):
    document, _ = document_ingest_text(title="t", text=TEXT, domain="general")
    document_claim(document_id=document.pk)
    assert worker.recover_interrupted(stale_after=timedelta(minutes=5)) == 0
