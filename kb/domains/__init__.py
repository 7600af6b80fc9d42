"""Knowledge-domain map: document profiles, domain aggregation and the planner's YAML map."""
from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kb.domains.service import KnowledgeDomainService
    from kb.models import Document

log = logging.getLogger(__name__)


def on_document_ingested(document: Document) -> None:
    """Ingestion hook: profile the document, then re-aggregate its domain. Never fails ingestion."""
    try:
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

    def document_ready(self, document: Document) -> None:
        try:
            self._domain_service().profile_document(document)
        except Exception:
            log.exception("knowledge map update failed for document %s", document.pk)
        self._pending.add((document.kb_id, document.domain))
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
            from kb.domains.service import build_domain_service

            self._service = build_domain_service()
        return self._service


def on_document_deleted(domain_id: str, *, kb_id: int) -> None:
    """Deletion hook: re-aggregate the domain the document belonged to."""
    from kb.domains.service import build_domain_service

    build_domain_service().on_document_change(domain_id, kb_id=kb_id)
