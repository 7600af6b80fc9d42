"""Knowledge-domain map: document profiles, domain aggregation and the planner's YAML map."""
from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from django.db import close_old_connections, connection

from docmind.foreground import give_way

if TYPE_CHECKING:
    from kb.domains.service import KnowledgeDomainService
    from kb.models import Document

log = logging.getLogger(__name__)


def on_document_ingested(document: Document) -> None:
    """Ingestion hook: profile the document, then re-aggregate its domain. Never fails ingestion."""
    try:
        # heavy: the domain service loads pydantic and the model client (80 ms); kb.domains loads at django.setup()
        from kb.domains.service import build_domain_service

        build_domain_service().on_document_ingested(document)
    except Exception:
        log.exception("knowledge map update failed for document %s", document.pk)


class DomainUpdates:
    """The knowledge-map work of a stream of ingested documents, debounced per domain.

    Each document is profiled when it is ready (the profile is its own). Re-aggregating its domain reads
    every document of the domain (and asks the model, when one is configured), so a folder of 500 pages
    would do it 500 times: each touched domain is aggregated at most once per `every` seconds while
    documents keep coming, and once more by `flush` when they stop. Never fails ingestion.
    """

    def __init__(self, *, every: float = 30.0, clock: Callable[[], float] = time.monotonic,
                 service: KnowledgeDomainService | None = None) -> None:
        """`service`: the domain service to use (built on first use when None)."""
        self.every, self._clock = every, clock
        self._pending: set[tuple[int, str]] = set()
        self._last = clock()
        self._service = service

    def documents_ready(self, documents: Sequence[Document]) -> None:
        """Profile the documents (together: one read, one write) and mark their domains for aggregation."""
        if not documents:
            return
        try:
            self._domain_service().profile_documents(documents)
        except Exception:
            log.exception("knowledge map update failed for documents %s", [document.pk for document in documents])
        self._pending.update((document.kb_id, document.domain) for document in documents)
        if self._clock() - self._last >= self.every:
            self.flush()

    def flush(self) -> None:
        """Aggregate every domain touched since the last flush."""
        pending, self._pending = sorted(self._pending), set()
        self._last = self._clock()
        for kb_id, domain_id in pending:
            try:
                self._domain_service().on_document_change(domain_id, kb_id=kb_id)
            except Exception:
                log.exception("knowledge map update failed for domain %s", domain_id)

    def _domain_service(self) -> KnowledgeDomainService:
        if self._service is None:
            # heavy: as in on_document_ingested
            from kb.domains.service import build_domain_service

            self._service = build_domain_service()
        return self._service


class BackgroundDomainUpdates:
    """DomainUpdates in a thread of its own, for the server's ingestion worker.

    Profiling a document is one model call when a chat model is configured: done where the documents are
    finished, each call held up the ingestion conveyor (and the readiness of the other documents of the
    batch), and the embedder ran dry after its two queued batches. Here `documents_ready` only queues the
    documents; the thread profiles the queue in order and aggregates domains as DomainUpdates does.
    The documents queued while it profiled are profiled together next, up to kb.domains.service.PROFILE_BATCH at a time.
    `flush` asks for the aggregation once the documents queued so far are profiled, without waiting;
    `close` waits for everything queued (up to `timeout`) and ends the thread. Never fails ingestion.
    """

    def __init__(self, updates: DomainUpdates | None = None) -> None:
        self.updates = updates or DomainUpdates()
        self._queue: queue.SimpleQueue[tuple[str, object]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._started = threading.Lock()

    def documents_ready(self, documents: Sequence[Document]) -> None:
        for document in documents:
            self._put("ready", document)

    def flush(self) -> None:
        self._put("flush", None)

    def close(self, *, timeout: float | None = None) -> bool:
        """Finish the queued work and end the thread; False when `timeout` passed first (the thread, a daemon,
        then ends with the process: those documents stay unprofiled until an admin regenerates their domain)."""
        if self._thread is None:
            return True
        self._queue.put(("flush", None))
        self._queue.put(("stop", None))
        self._thread.join(timeout)
        if self._thread.is_alive():
            log.warning("knowledge map: work still queued after %.0f s; leaving it", timeout or 0.0)
            return False
        self._thread = None
        return True

    def _put(self, kind: str, item: object) -> None:
        with self._started:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._serve, name="docmind-knowledge-map", daemon=True)
                self._thread.start()
        self._queue.put((kind, item))

    def _serve(self) -> None:
        # heavy: as in on_document_ingested; the thread starts with the first ingested document
        from kb.domains.service import PROFILE_BATCH

        held: tuple[str, object] | None = None  # taken from the queue while gathering documents, not served yet
        try:
            while True:
                kind, item = held or self._queue.get()
                held = None
                if kind == "stop":
                    return
                give_way()
                try:
                    if kind == "ready":
                        documents = [item]
                        while len(documents) < PROFILE_BATCH and not self._queue.empty():
                            kind, item = self._queue.get()
                            if kind != "ready":
                                held = (kind, item)
                                break
                            documents.append(item)
                        self.updates.documents_ready(documents)  # type: ignore[arg-type]
                    else:
                        self.updates.flush()
                except Exception:  # DomainUpdates logs its own failures; this keeps the thread alive regardless
                    log.exception("knowledge map update failed")
                if held is None and self._queue.empty():
                    close_old_connections()
        finally:
            connection.close()


def on_document_deleted(domain_id: str, *, kb_id: int) -> None:
    """Deletion hook: re-aggregate the domain the document belonged to."""
    # heavy: as in on_document_ingested
    from kb.domains.service import build_domain_service

    build_domain_service().on_document_change(domain_id, kb_id=kb_id)
