"""The DB-backed queue: atomic claim, progress to 100, interrupted jobs resumed or failed."""
import threading
import time
from datetime import timedelta

import pytest
from django.core.files.base import ContentFile
from django.db import connection

from docmind.backends import get_embedder
from docmind.embeddings import EmbeddingError
from docmind.indexes.stores import get_lexical_index, get_vector_store
from docmind.indexes.vectorstore import VectorStoreError
from kb.ingestion import worker
from kb.models import Chunk, Document, DocumentStatus
from kb.services import document_claim, document_create, document_ingest_text
from tests.kb.ingestion.files import docx_with_paragraphs

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


def test_an_unparseable_file_fails_with_its_reason_and_a_line_in_the_server_log(kb_index, caplog):
    document, _ = document_create(uploaded_file=ContentFile(bytes(range(256)) * 4, name="x.txt"), domain="general")
    with caplog.at_level("WARNING", logger="kb.ingestion.worker"):
        worker.process_pending_documents()
    document.refresh_from_db()
    assert document.status == DocumentStatus.FAILED
    assert "binary" in document.error
    assert not Chunk.objects.filter(document=document).exists()
    assert any(f"document {document.pk} could not be parsed" in r.getMessage() and "binary" in r.getMessage()
               for r in caplog.records)


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


def test_a_parse_stopped_by_a_shutdown_puts_the_document_back_in_the_queue(kb_index, monkeypatch):
    from kb.ingestion.parsers import ParseInterrupted
    from kb.ingestion.parsers.isolated import IsolatedParser

    def stopped(self, data, file_type):
        raise ParseInterrupted("the parser was stopped by signal 15")

    document, _ = document_ingest_text(title="t", text=TEXT, domain="general")
    monkeypatch.setattr(IsolatedParser, "__call__", stopped)
    worker.process_pending_documents(limit=1)
    document.refresh_from_db()
    assert (document.status, document.error) == (DocumentStatus.PENDING, "")

    monkeypatch.undo()
    worker.process_pending_documents()
    document.refresh_from_db()
    assert document.status == DocumentStatus.READY


def test_a_document_whose_parse_is_stopped_again_and_again_fails_with_the_reason(kb_index, monkeypatch):
    from kb.ingestion.parsers import ParseInterrupted
    from kb.ingestion.parsers.isolated import IsolatedParser

    def stopped(self, data, file_type):
        raise ParseInterrupted("the parser was stopped by signal 15")

    document, _ = document_ingest_text(title="t", text=TEXT, domain="general")
    monkeypatch.setattr(IsolatedParser, "__call__", stopped)
    for _ in range(worker.MAX_ATTEMPTS):
        worker.process_pending_documents(limit=1)
    document.refresh_from_db()
    assert document.status == DocumentStatus.FAILED
    assert f"interrupted {worker.MAX_ATTEMPTS} times" in document.error


def test_a_live_job_is_not_taken_from_its_worker(kb_index):
    document, _ = document_ingest_text(title="t", text=TEXT, domain="general")
    document_claim(document_id=document.pk)
    assert worker.recover_interrupted(stale_after=timedelta(minutes=5)) == 0


class BrokenEmbeddingService:
    """The embedding service at the network edge failing after its first batch, as a remote one does."""

    def __init__(self) -> None:
        self.real = get_embedder()
        self.name, self.dim = self.real.name, self.real.dim
        self.calls = 0

    def embed_query(self, text):
        return self.real.embed_query(text)

    def embed_passages(self, texts):
        self.calls += 1
        if self.calls > 1:
            raise EmbeddingError("embedding service failed after 3 attempts: Connection refused "
                                 "(http://10.1.2.3:8000/v1/embeddings, /srv/docmind/data/media/x.txt)")
        return self.real.embed_passages(texts)


def _ingester_with(embedder):
    from kb.ingestion.chunker import TextChunker
    from kb.ingestion.parsers import parse_document
    from kb.ingestion.pipeline import DocumentIngester

    return DocumentIngester(embedder=embedder, vectors=get_vector_store(), lexical=get_lexical_index(),
                            chunker=TextChunker(parent_chars=400, child_chars=100), parse=parse_document,
                            batch_size=2)


def test_a_document_failing_mid_indexing_keeps_no_chunks_vectors_or_bm25_entries(
        kb_index, empty_indexes, monkeypatch, django_capture_on_commit_callbacks):
    service = BrokenEmbeddingService()
    monkeypatch.setattr(worker, "build_ingester", lambda: _ingester_with(service))
    document, _ = document_ingest_text(title="t", text=TEXT, domain="general")
    with django_capture_on_commit_callbacks(execute=True):
        worker.process_pending_documents()
    # A later batch failed after the first one embedded (the conveyor embeds a batch ahead, so maybe more).
    assert service.calls >= 2
    document.refresh_from_db()
    assert document.status == DocumentStatus.FAILED
    assert document.error.startswith("the embedding service failed")
    assert not Chunk.objects.filter(document=document).exists()
    assert get_vector_store().all_ids() == set()
    assert get_lexical_index().all_ids() == set()


@pytest.mark.parametrize("error", [
    EmbeddingError("embedding service failed: http://10.1.2.3:8000/v1 refused"),
    VectorStoreError("cannot open the vector store at /srv/docmind/data/milvus.db: locked"),
    FileNotFoundError(2, "No such file or directory", "/srv/docmind/data/media/documents/a.txt"),
    RuntimeError("unexpected state in /srv/docmind/kb/ingestion/pipeline.py"),
], ids=["embedding", "vector-store", "file", "other"])
@pytest.mark.django_db(False)
def test_failure_reasons_name_the_kind_of_failure_but_no_path_or_host(error):
    reason = worker.failure_reason(error)
    assert "/" not in reason and "10.1.2.3" not in reason and "srv" not in reason
    assert type(error).__name__ in reason and "server log" in reason


def test_a_file_missing_from_storage_fails_without_showing_the_server_path(kb_index):
    document, _ = document_ingest_text(title="t", text=TEXT, domain="general")
    document.file.delete(save=False)
    worker.process_pending_documents()
    document.refresh_from_db()
    assert document.status == DocumentStatus.FAILED
    assert document.error.startswith("the stored file could not be read")
    assert str(document.file.storage.location) not in document.error and "/" not in document.error


def test_a_job_interrupted_three_times_drops_what_it_had_indexed(
        kb_index, empty_indexes, django_capture_on_commit_callbacks):
    document, _ = document_ingest_text(title="t", text=TEXT, domain="general")
    worker.process_pending_documents()
    children = list(Chunk.objects.filter(document=document, level=1).values_list("id", flat=True))
    assert set(get_vector_store().fetch(children)) == set(children)
    Document.objects.filter(pk=document.pk).update(status=DocumentStatus.PROCESSING, attempts=3)
    with django_capture_on_commit_callbacks(execute=True):
        worker.recover_interrupted(stale_after=timedelta(0))
    assert not Chunk.objects.filter(document=document).exists()
    assert get_vector_store().fetch(children) == {}
    assert not set(children) & get_lexical_index().all_ids()


def test_a_zip_bomb_fails_with_its_reason_and_the_queue_moves_on(kb_index):
    bomb, _ = document_create(uploaded_file=ContentFile(docx_with_paragraphs(4_000_000), name="bomb.docx"),
                              domain="general")
    good, _ = document_ingest_text(title="t", text=TEXT, domain="general")
    assert worker.process_pending_documents() == 2
    bomb.refresh_from_db()
    good.refresh_from_db()
    assert bomb.status == DocumentStatus.FAILED and "zip bomb" in bomb.error
    assert good.status == DocumentStatus.READY


@pytest.mark.django_db(transaction=True)
def test_the_server_worker_finishes_documents_while_their_profiles_wait_for_a_slow_model(kb_index, monkeypatch):
    from kb.domains.service import KnowledgeDomainService

    gate, profile = threading.Event(), KnowledgeDomainService.profile_documents

    def slow_profile(self, documents):
        gate.wait(60)  # as a configured chat model answering slowly
        return profile(self, documents)

    monkeypatch.setattr(KnowledgeDomainService, "profile_documents", slow_profile)
    documents = [document_ingest_text(title=f"t{i}", text=f"第{i}篇。" + TEXT, domain="general")[0] for i in range(3)]
    taken = []

    def serve():
        try:
            taken.append(worker.run_worker(stop=threading.Event(), sole_worker=True, poll_seconds=1, until_idle=True))
        finally:
            connection.close()

    thread = threading.Thread(target=serve)
    thread.start()
    ids = [d.pk for d in documents]
    deadline = time.monotonic() + 60
    while Document.objects.filter(pk__in=ids, status=DocumentStatus.READY).count() < 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    ready = Document.objects.filter(pk__in=ids, status=DocumentStatus.READY).count()
    profiled = [d for d in Document.objects.filter(pk__in=ids) if "covers" in (d.metadata or {})]
    gate.set()
    thread.join(60)

    assert (ready, profiled) == (3, [])
    assert taken == [3]
    assert all("covers" in d.metadata for d in Document.objects.filter(pk__in=ids))
