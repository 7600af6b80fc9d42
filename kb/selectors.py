"""Reads of the knowledge base that are more than one ORM line."""
from __future__ import annotations

import logging
import time
from collections.abc import Collection

from django.core.cache import cache
from django.db.models import Count, Q, QuerySet

from kb.models import Chunk, ChunkLevel, Document, DocumentStatus

KB_VERSION_KEY = "kb:version"

cache_log = logging.getLogger("docmind.cache")


def kb_version() -> int:
    """A number that changes whenever any document or chunk changes (answer caches key on it).

    Versions are microsecond timestamps rather than a counter, so a cache that lost the key
    starts a new, never-seen version instead of reusing an old one. The cache is best-effort:
    when it fails, the answer is a fresh version, which makes the answer cache miss.
    """
    fresh = time.time_ns() // 1000
    try:
        version = cache.get(KB_VERSION_KEY)
        if version is None:
            version = fresh
            if not cache.add(KB_VERSION_KEY, version, None):
                version = cache.get(KB_VERSION_KEY, version)
        return int(version)
    except Exception:  # noqa: BLE001 - a cache must never fail a chat turn
        cache_log.warning("kb_version: the cache failed; answering a fresh version", exc_info=True)
        return fresh


def document_list(*, kb_ids: Collection[int], domain: str | None = None,
                  status: str | None = None) -> QuerySet[Document]:
    """Documents of the knowledge bases in `kb_ids` (the caller's readable ones), newest first."""
    documents = (Document.objects.filter(kb_id__in=list(kb_ids))
                 .annotate(chunk_count=Count("chunks", filter=Q(chunks__level=ChunkLevel.CHILD))))
    if domain:
        documents = documents.filter(domain=domain)
    if status:
        documents = documents.filter(status=status)
    return documents.order_by("-created_at", "-id")


def child_chunk_count(*, document: Document) -> int:
    return Chunk.objects.filter(document=document, level=ChunkLevel.CHILD).count()


def children_without_vectors() -> QuerySet[Chunk]:
    """Child chunks of live documents whose vector was never stored (kb_reconcile repairs them)."""
    return (Chunk.objects.filter(level=ChunkLevel.CHILD, vector_id__isnull=True)
            .exclude(document__status=DocumentStatus.FAILED).select_related("document"))


def document_sections(*, document: Document) -> list[Chunk]:
    """The document's parent chunks in reading order: together they hold its whole parsed text."""
    return list(Chunk.objects.filter(document=document, level=ChunkLevel.PARENT).order_by("ordinal"))


def chunk_of_document(*, document: Document, chunk_id: int) -> Chunk | None:
    return Chunk.objects.filter(document=document, pk=chunk_id).first()
