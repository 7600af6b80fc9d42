"""The ingestion queue: pending Document rows, claimed atomically, processed by a thread in the server."""
from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Iterator
from datetime import timedelta

from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

from config_admin.conf import ai_config
from docmind import backends
from docmind.embeddings import EmbeddingError
from docmind.indexes.stores import get_lexical_index, get_vector_store
from docmind.indexes.vectorstore import VectorStoreError, is_lite_uri
from docmind.telemetry import metrics
from kb.domains import BackgroundDomainUpdates, DomainUpdates
from kb.ingestion import reasons
from kb.ingestion.chunker import TextChunker
from kb.ingestion.conveyor import IngestionConveyor
from kb.ingestion.parsers import ParseError, ParseInterrupted
from kb.ingestion.parsers.isolated import IsolatedParser
from kb.ingestion.pipeline import DocumentGone, DocumentIngester
from kb.ingestion.wakeup import wait_for_work
from kb.models import Document, DocumentStatus
from kb.services import (
    document_claim,
    document_mark_failed,
    document_requeue_interrupted,
    document_set_progress,
    documents_mark_ready,
)

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
POLL_SECONDS = 2.0
# A stopping worker gives the knowledge-map work still queued this long: within the grace a process manager
# allows a stopping process (docmind.shutdown.GRACE_SECONDS is 8 of the usual 10 s). The documents are ready
# already; one whose profile is left undone gets it when an admin regenerates its domain.
MAP_DRAIN_SECONDS = 5.0
# A processing job whose row has not moved for this long belongs to a process that died.
LEASE = timedelta(minutes=5)

_started = threading.Lock()
_thread: threading.Thread | None = None


def build_ingester():
    """The pipeline wired to the configured backends and the current chunk sizes."""
    snap = ai_config.snapshot()
    chunker = TextChunker(parent_chars=snap["chunk.parent_chars"], child_chars=snap["chunk.child_chars"])
    parse = _warm_parser(settings.PARSE_TIMEOUT_SECONDS, settings.PARSE_MEMORY_BYTES)
    return DocumentIngester(embedder=backends.get_ingest_embedder(), vectors=get_vector_store(),
                            lexical=get_lexical_index(), chunker=chunker, parse=parse,
                            on_progress=lambda ids, done: document_set_progress(document_ids=ids, progress=done))


@functools.cache
def _warm_parser(timeout_seconds: float, memory_bytes: int):
    """One parser per process and limits, so that its warm children serve every run of the worker."""
    return IsolatedParser(timeout_seconds=timeout_seconds, memory_bytes=memory_bytes)


def _observe(document: Document, outcome: str) -> None:
    """Throughput for /metrics: documents per outcome and the time from claim (its last update) to now."""
    metrics.INGESTED.labels(outcome=outcome).inc()
    if document.updated_at is not None:
        metrics.INGEST_SECONDS.observe(max(0.0, (timezone.now() - document.updated_at).total_seconds()))


def _finish_ready(finished: list[tuple[Document, int]], map_updates: DomainUpdates | BackgroundDomainUpdates) -> None:
    for document, _ in finished:
        _observe(document, "ready")
    marked = documents_mark_ready(document_ids=[document.pk for document, _ in finished])
    # knowledge map: their profiles (here or in the map's thread), their domains re-aggregated debounced; never raises
    map_updates.documents_ready([document for document, _ in finished if document.pk in marked])


def _finish_failed(document: Document, exc: Exception) -> None:
    if isinstance(exc, ParseInterrupted):
        # Stopped by a shutdown, not by the file: back to the queue, for this worker or the next one to start.
        log.warning("ingestion of document %s was interrupted (%s)", document.pk, exc)
        attempts = Document.objects.filter(pk=document.pk).values_list("attempts", flat=True).first()
        if attempts is not None:
            _requeue_or_fail(document.pk, attempts)
        return
    _observe(document, "failed")
    if isinstance(exc, ParseError):
        # The file's own fault, said in full by its reason: a line for the operator, without a traceback.
        log.warning("document %s could not be parsed: %s", document.pk, exc)
        document_mark_failed(document_id=document.pk, reason=str(exc))
        return
    if isinstance(exc, DocumentGone) or not Document.objects.filter(pk=document.pk).exists():
        return  # deleted while we worked: its delete already purged the index entries
    log.error("ingestion of document %s failed", document.pk, exc_info=exc)
    document_mark_failed(document_id=document.pk, reason=failure_reason(exc))


def _run(documents: Iterator[Document | None],
         map_updates: DomainUpdates | BackgroundDomainUpdates | None = None) -> int:
    """The conveyor over `documents`; the knowledge-map work goes to `map_updates` (by default done in this
    thread: profiles as documents finish, the domains at the end)."""
    map_updates = map_updates or DomainUpdates()
    conveyor = IngestionConveyor(ingester=build_ingester(), on_failed=_finish_failed,
                                 on_done=lambda finished: _finish_ready(finished, map_updates))
    try:
        return conveyor.run(documents)
    finally:
        map_updates.flush()


def process_document(document_id: int) -> bool:
    """Ingest one claimed document; returns True when it ended ready."""
    document = Document.objects.filter(pk=document_id).first()
    if document is None:
        return False
    _run(iter([document]))
    return Document.objects.filter(pk=document_id, status=DocumentStatus.READY).exists()


def failure_reason(exc: Exception) -> str:
    """What a member may read about an unexpected failure: its kind, never paths, hosts or internals.

    The exception itself (file paths, service URLs, backend messages) goes to the server log.
    """
    if isinstance(exc, EmbeddingError):
        template = reasons.EMBEDDING_FAILED
    elif isinstance(exc, VectorStoreError):
        template = reasons.VECTOR_STORE_FAILED
    elif isinstance(exc, OSError):
        template = reasons.STORED_FILE_UNREADABLE
    else:
        template = reasons.INTERNAL_ERROR
    return template % {"error": type(exc).__name__}


def claim_next() -> int | None:
    """Claim the oldest pending document: an UPDATE that only one worker can win."""
    candidates = (Document.objects.filter(status=DocumentStatus.PENDING).order_by("created_at", "id")
                  .values_list("id", flat=True)[:8])
    for document_id in candidates:
        if document_claim(document_id=document_id):
            return document_id
    return None


def _claimed(limit: int | None, stop: threading.Event | None = None) -> Iterator[Document | None]:
    """Documents claimed one by one, when the conveyor asks for the next; None while the queue is empty (the
    conveyor asks again once it has stored a batch, so uploads arriving meanwhile join the running batches
    without a poll); none once `stop` is set."""
    taken = 0
    while (limit is None or taken < limit) and not (stop is not None and stop.is_set()):
        document_id = claim_next()
        if document_id is None:
            yield None
            continue
        taken += 1
        log.info("claimed document %s", document_id)
        document = Document.objects.filter(pk=document_id).first()
        if document is not None:
            yield document


def process_pending_documents(*, limit: int | None = None, stop: threading.Event | None = None,
                              map_updates: BackgroundDomainUpdates | None = None) -> int:
    """Drain the queue in this thread (workers, ingest command, tests, benchmarks); returns how many were taken.

    The documents go through the conveyor: the next one is parsed and stored while the current one embeds.
    Once `stop` is set no further document is claimed; the ones started are finished. The knowledge map is
    up to date on return, unless `map_updates` takes its work to a thread of its own.
    """
    return _run(_claimed(limit, stop), map_updates)


def _requeue_or_fail(document_id: int, attempts: int) -> None:
    """An interrupted job goes back to the queue, unless it was interrupted so often that it never will finish."""
    if attempts >= MAX_ATTEMPTS:
        document_mark_failed(document_id=document_id, reason=reasons.INTERRUPTED % {"attempts": attempts})
    else:
        document_requeue_interrupted(document_id=document_id)


def recover_interrupted(*, stale_after: timedelta = LEASE) -> int:
    """Documents left in `processing` by a dead process go back to pending, or fail after MAX_ATTEMPTS."""
    cutoff = timezone.now() - stale_after
    stuck = Document.objects.filter(status=DocumentStatus.PROCESSING, updated_at__lte=cutoff)
    recovered = 0
    for document_id, attempts in stuck.values_list("id", "attempts"):
        _requeue_or_fail(document_id, attempts)
        recovered += 1
    if recovered:
        log.info("recovered %d interrupted ingestion job(s)", recovered)
    return recovered


def _single_process_store() -> bool:
    # A Milvus Lite file can only be open in one process, so any processing row at start-up is ours, and dead.
    return is_lite_uri(str(settings.MILVUS_URI))


def run_worker(*, stop: threading.Event, sole_worker: bool, poll_seconds: float = POLL_SECONDS,
               until_idle: bool = False) -> int:
    """The worker loop, in a server's thread or in `manage.py kb_worker`: recover jobs of dead workers, drain
    the queue, then sleep until an upload in this process wakes it or the next poll; returns when `stop` is
    set (after finishing the documents it started) or, with `until_idle`, when the queue is empty.

    `sole_worker`: no other process works on this queue, so documents left processing at start-up
    are resumed at once instead of after their lease."""
    stale_after = timedelta(0) if sole_worker else LEASE
    taken = 0
    # The knowledge map is worked on beside the conveyor, so that no profile (a model call) holds it up.
    map_updates = BackgroundDomainUpdates()
    try:
        while not stop.is_set():
            drained = 0
            try:
                close_old_connections()
                recover_interrupted(stale_after=stale_after)
                stale_after = LEASE
                drained = process_pending_documents(stop=stop, map_updates=map_updates)
                taken += drained
            except Exception:
                log.exception("ingestion worker iteration failed; retrying")
            finally:
                close_old_connections()
            if until_idle and not drained:
                break
            wait_for_work(poll_seconds)
    finally:
        # Idle: everything queued is finished; stopped: within the grace of a stopping process.
        map_updates.close(timeout=MAP_DRAIN_SECONDS if stop.is_set() else None)
    return taken


def _loop() -> None:
    run_worker(stop=threading.Event(), sole_worker=_single_process_store(), poll_seconds=settings.INGEST_POLL_SECONDS)


def start_background_worker() -> None:
    """Start the daemon ingestion thread once per process (idempotent)."""
    global _thread
    with _started:
        if _thread is not None and _thread.is_alive():
            return
        _thread = threading.Thread(target=_loop, name="docmind-ingest", daemon=True)
        _thread.start()
