"""Writes of the knowledge-domain map: a domain's document count, its generated texts, a document's profile."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import transaction
from django.db.models import F

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


def knowledge_domain_count_new(*, kb_id: int, domain_id: str) -> None:
    """A new document of the domain was stored (in the caller's transaction, so the two commit together): one
    UPDATE adds it to the count when the domain's row exists (every upload of a folder after its first), else
    knowledge_domain_refresh creates the row. Added rather than recounted, so that the domain's ten-thousandth
    upload costs what its second does; a new document is never failed, so it always counts."""
    if not KnowledgeDomain.objects.filter(kb_id=kb_id, domain_id=domain_id).update(
            document_count=F("document_count") + 1):
        knowledge_domain_refresh(kb_id=kb_id, domain_id=domain_id)


def document_profiles_save(profiles: Mapping[int, Mapping[str, Any]]) -> dict[int, dict[str, Any]]:
    """Merge each document's profile into its metadata (other keys kept), in one transaction; returns the stored
    metadata of the documents still there."""
    if not profiles:
        return {}
    with transaction.atomic():
        # Read here, not taken from the caller: ingestion wrote chunk counts into the rows after they were loaded.
        stored = dict(Document.objects.filter(pk__in=list(profiles)).values_list("pk", "metadata"))
        merged = {pk: {**(stored[pk] or {}), **profile} for pk, profile in profiles.items() if pk in stored}
        for pk, metadata in merged.items():
            Document.objects.filter(pk=pk).update(metadata=metadata)
    return merged


def knowledge_domain_texts_save(*, domain: KnowledgeDomain, when_to_retrieve: str, description: str | None) -> None:
    domain.when_to_retrieve = when_to_retrieve
    domain.description = description
    domain.save(update_fields=["when_to_retrieve", "description", "updated_at"])
