"""The ingestion queue: pending Document rows, claimed atomically, processed by a thread in the server."""
from __future__ import annotations

import logging
import threading
from datetime import timedelta

from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

from kb.ingestion.parsers import ParseError
from kb.models import Document, DocumentStatus

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
POLL_SECONDS = 2.0
# A processing job whose row has not moved for this long belongs to a process that died.
LEASE = timedelta(minutes=5)

_wake = threading.Event()
_started = threading.Lock()
_thread: threading.Thread | None = None


def build_ingester():
    """The pipeline wired to the configured backends and the current chunk sizes."""
    from config_admin.conf import ai_config
    from docmind.backends import get_embedder, get_vector_store
    from kb.ingestion.chunker import TextChunker
    from kb.ingestion.parsers.isolated import IsolatedParser
    from kb.ingestion.pipeline import DocumentIngester
    from kb.search import get_lexical_index
    from kb.services import document_set_progress

    snap = ai_config.snapshot()
    chunker = TextChunker(parent_chars=snap["chunk.parent_chars"], child_chars=snap["chunk.child_chars"])
    parse = IsolatedParser(timeout_seconds=settings.PARSE_TIMEOUT_SECONDS, memory_bytes=settings.PARSE_MEMORY_BYTES)
    return DocumentIngester(embedder=get_embedder(), vectors=get_vector_store(), lexical=get_lexical_index(),
                            chunker=chunker, parse=parse,
                            on_progress=lambda pk, progress: document_set_progress(document_id=pk, progress=progress))


def process_document(document_id: int) -> bool:
    """Ingest one claimed document; returns True when it ended ready."""
    from kb.services import document_mark_failed, document_mark_ready

    document = Document.objects.filter(pk=document_id).first()
    if document is None:
        return False
    try:
        count = build_ingester().run(document=document)
    except ParseError as exc:
        document_mark_failed(document_id=document_id, reason=str(exc))
        return False
    except Exception as exc:
        if not Document.objects.filter(pk=document_id).exists():
            return False  # deleted while we worked: its delete already purged the index entries
        log.exception("ingestion of document %s failed", document_id)
        document_mark_failed(document_id=document_id, reason=failure_reason(exc))
        return False
    ready = document_mark_ready(document_id=document_id, chunk_count=count)
    if ready:  # knowledge map (seed 003): profile the document, re-aggregate its domain; never raises
        from kb.domains import on_document_ingested

        on_document_ingested(document)
    return ready


def failure_reason(exc: Exception) -> str:
    """What a member may read about an unexpected failure: its kind, never paths, hosts or internals.

    The exception itself (file paths, service URLs, backend messages) goes to the server log.
    """
    from docmind.embeddings import EmbeddingError
    from docmind.vectorstore import VectorStoreError

    if isinstance(exc, EmbeddingError):
        what = "the embedding service failed"
    elif isinstance(exc, VectorStoreError):
        what = "the vector store failed"
    elif isinstance(exc, OSError):
        what = "the stored file could not be read"
    else:
        what = "an internal error stopped indexing"
    return f"{what} ({type(exc).__name__}); upload the file again to retry (details are in the server log)"


def claim_next() -> int | None:
    """Claim the oldest pending document: an UPDATE that only one worker can win."""
    from kb.services import document_claim

    candidates = (Document.objects.filter(status=DocumentStatus.PENDING).order_by("created_at", "id")
                  .values_list("id", flat=True)[:8])
    for document_id in candidates:
        if document_claim(document_id=document_id):
            return document_id
    return None


def process_pending_documents(*, limit: int | None = None) -> int:
    """Drain the queue in this thread (ingest command, tests, benchmarks); returns how many were processed."""
    processed = 0
    while limit is None or processed < limit:
        document_id = claim_next()
        if document_id is None:
            break
        process_document(document_id)
        processed += 1
    return processed


def recover_interrupted(*, stale_after: timedelta = LEASE) -> int:
    """Documents left in `processing` by a dead process go back to pending, or fail after MAX_ATTEMPTS."""
    from kb.services import document_mark_failed

    cutoff = timezone.now() - stale_after
    stuck = Document.objects.filter(status=DocumentStatus.PROCESSING, updated_at__lte=cutoff)
    recovered = 0
    for document_id, attempts in stuck.values_list("id", "attempts"):
        if attempts >= MAX_ATTEMPTS:
            document_mark_failed(document_id=document_id,
                                 reason=f"ingestion was interrupted {attempts} times (server restarts or crashes)")
        else:
            Document.objects.filter(pk=document_id, status=DocumentStatus.PROCESSING).update(
                status=DocumentStatus.PENDING, progress=0)
        recovered += 1
    if recovered:
        log.info("recovered %d interrupted ingestion job(s)", recovered)
    return recovered


def wake_worker() -> None:
    """Called after an upload commits so the worker starts at once instead of at its next poll."""
    _wake.set()


def _single_process_store() -> bool:
    # A Milvus Lite file can only be open in one process, so any processing row at start-up is ours, and dead.
    return not str(settings.MILVUS_URI).startswith(("http://", "https://", "tcp://", "grpc://"))


def _loop() -> None:
    stale_after = timedelta(0) if _single_process_store() else LEASE
    while True:
        try:
            close_old_connections()
            recover_interrupted(stale_after=stale_after)
            stale_after = LEASE
            process_pending_documents()
        except Exception:
            log.exception("ingestion worker iteration failed; retrying")
        finally:
            close_old_connections()
        _wake.wait(POLL_SECONDS)
        _wake.clear()


def start_background_worker() -> None:
    """Start the daemon ingestion thread once per process (idempotent)."""
    global _thread
    with _started:
        if _thread is not None and _thread.is_alive():
            return
        _thread = threading.Thread(target=_loop, name="docmind-ingest", daemon=True)
        _thread.start()
