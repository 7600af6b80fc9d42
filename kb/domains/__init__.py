"""Knowledge-domain map: document profiles, domain aggregation and the planner's YAML map."""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kb.models import Document

log = logging.getLogger(__name__)


def on_document_ingested(document: Document) -> None:
    """Ingestion hook: profile the document, then re-aggregate its domain. Never fails ingestion."""
    try:
        from kb.domains.service import build_domain_service

        build_domain_service().on_document_ingested(document)
    except Exception:
        log.exception("knowledge map update failed for document %s", document.pk)


def on_document_deleted(domain_id: str, *, kb_id: int) -> None:
    """Deletion hook: re-aggregate the domain the document belonged to."""
    from kb.domains.service import build_domain_service

    build_domain_service().on_document_change(domain_id, kb_id=kb_id)
