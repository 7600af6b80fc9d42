"""Reads of the knowledge base that are more than one ORM line."""
from __future__ import annotations

import time

from django.core.cache import cache
from django.db.models import Count, Q, QuerySet

from kb.models import Chunk, ChunkLevel, Document, DocumentStatus

KB_VERSION_KEY = "kb:version"


def kb_version() -> int:
    """A number that changes whenever any document or chunk changes (answer caches key on it).

    Versions are microsecond timestamps rather than a counter, so a cache that lost the key
    starts a new, never-seen version instead of reusing an old one.
    """
    version = cache.get(KB_VERSION_KEY)
    if version is None:
        version = time.time_ns() // 1000
        if not cache.add(KB_VERSION_KEY, version, None):
            version = cache.get(KB_VERSION_KEY, version)
    return int(version)


def document_list(*, domain: str | None = None, status: str | None = None) -> QuerySet[Document]:
    documents = Document.objects.annotate(chunk_count=Count("chunks", filter=Q(chunks__level=ChunkLevel.CHILD)))
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


def document_chunks_for_read(*, document_id: int) -> QuerySet[Chunk]:
    """Child chunks of one ready document, in reading order (for the selected-document path)."""
    return Chunk.objects.filter(document_id=document_id, level=ChunkLevel.CHILD,
                                document__status=DocumentStatus.READY).order_by("ordinal")


def document_sections(*, document: Document) -> list[Chunk]:
    """The document's parent chunks in reading order: together they hold its whole parsed text."""
    return list(Chunk.objects.filter(document=document, level=ChunkLevel.PARENT).order_by("ordinal"))


def chunk_of_document(*, document: Document, chunk_id: int) -> Chunk | None:
    return Chunk.objects.filter(document=document, pk=chunk_id).first()
