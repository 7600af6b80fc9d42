"""Writes of the knowledge-domain map: a domain's document count, its generated texts, a document's profile."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kb.models import Document, DocumentStatus, KnowledgeDomain


def knowledge_domain_refresh(*, kb_id: int, domain_id: str) -> KnowledgeDomain | None:
    """Recount a domain's live documents in one knowledge base (everything not failed), creating its row
    when missing: domains live inside a knowledge base, so two bases never share a description.

    A domain that no document names any more (its last one was deleted or moved away) loses its row
    when the row was created for a document; then None. A row an administrator created or described
    stays, counting zero. A failed document still names its domain: it can be retried.
    """
    documents = Document.objects.filter(kb_id=kb_id, domain=domain_id)
    if not documents.exists():
        KnowledgeDomain.objects.filter(kb_id=kb_id, domain_id=domain_id, created_automatically=True).delete()
        kept = KnowledgeDomain.objects.filter(kb_id=kb_id, domain_id=domain_id).first()
        if kept is None:
            return None
    count = documents.exclude(status=DocumentStatus.FAILED).count()
    domain, created = KnowledgeDomain.objects.get_or_create(
        kb_id=kb_id, domain_id=domain_id, defaults={"document_count": count, "created_automatically": True})
    if not created and domain.document_count != count:
        KnowledgeDomain.objects.filter(pk=domain.pk).update(document_count=count)
        domain.document_count = count
    return domain


def document_profile_save(*, document: Document, profile: Mapping[str, Any]) -> dict[str, Any]:
    """Merge a profile into the document's metadata (other keys kept); returns the stored metadata."""
    # Re-read: ingestion wrote chunk counts into the row after the caller loaded it.
    stored = Document.objects.filter(pk=document.pk).values_list("metadata", flat=True).first()
    metadata = {**(stored or document.metadata or {}), **profile}
    Document.objects.filter(pk=document.pk).update(metadata=metadata)
    return metadata


def knowledge_domain_texts_save(*, domain: KnowledgeDomain, when_to_retrieve: str, description: str | None) -> None:
    domain.when_to_retrieve = when_to_retrieve
    domain.description = description
    domain.save(update_fields=["when_to_retrieve", "description", "updated_at"])
