"""Reads of the knowledge base's tables (documents, chunks, domains), for kb and for the apps above it."""
from __future__ import annotations

import logging
import re
import time
from collections.abc import Collection
from typing import Any

from django.core.cache import cache
from django.db.models import Count, Max, Q, QuerySet

from kb.ingestion.chunker import CONTEXT_SEPARATOR
from kb.models import Chunk, ChunkLevel, Document, DocumentStatus, KnowledgeDomain

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


def documents_in(*, document_ids: Collection[int], kb_ids: Collection[int]) -> frozenset[int]:
    """Those of `document_ids` that belong to one of the knowledge bases `kb_ids`."""
    if not document_ids or not kb_ids:
        return frozenset()
    return frozenset(Document.objects.filter(pk__in=list(document_ids), kb_id__in=list(kb_ids))
                     .values_list("pk", flat=True))


def child_chunk_count(*, document: Document) -> int:
    return Chunk.objects.filter(document=document, level=ChunkLevel.CHILD).count()


def children_without_vectors() -> QuerySet[Chunk]:
    """Child chunks of live documents whose vector was never stored (kb_reconcile repairs them)."""
    return (Chunk.objects.filter(level=ChunkLevel.CHILD, vector_id__isnull=True)
            .exclude(document__status=DocumentStatus.FAILED).select_related("document"))


def document_sections(*, document: Document) -> list[Chunk]:
    """The document's parent chunks in reading order: together they hold its whole parsed text."""
    return list(Chunk.objects.filter(document=document, level=ChunkLevel.PARENT).order_by("ordinal"))


def top_heading(*, document: Document) -> str:
    """The heading the document's text opens under (its first chunk's context after the title): a title heading with
    no text of its own ("# Business Travel Policy" right above "## Booking") is in no section's text, only there."""
    context = (Chunk.objects.filter(document=document, level=ChunkLevel.CHILD).order_by("ordinal")
               .values_list("context", flat=True).first()) or ""
    parts = context.split(CONTEXT_SEPARATOR)
    return parts[1].strip() if len(parts) > 1 else ""


def chunk_of_document(*, document: Document, chunk_id: int) -> Chunk | None:
    return Chunk.objects.filter(document=document, pk=chunk_id).first()


def domain_list(*, kb_ids: Collection[int]) -> QuerySet[KnowledgeDomain]:
    """The knowledge domains of the knowledge bases in `kb_ids`, by domain, then base."""
    return KnowledgeDomain.objects.filter(kb_id__in=list(kb_ids)).order_by("domain_id", "kb_id")


def section_headings(*, document_id: int, kb_ids: Collection[int]) -> tuple[str, ...]:
    """A document's section headings in reading order (the innermost heading of each child's context), if it
    is in one of `kb_ids`; none otherwise, exactly as for an unknown document."""
    contexts = (Chunk.objects.filter(document_id=document_id, level=ChunkLevel.CHILD,
                                     document__kb_id__in=list(kb_ids))
                .order_by("ordinal").values_list("context", flat=True))
    sections: list[str] = []
    for context in contexts:
        parts = context.split(CONTEXT_SEPARATOR)
        if len(parts) > 1 and parts[-1] not in sections:
            sections.append(parts[-1])
    return tuple(sections)


def ready_documents(*, kb_ids: Collection[int], limit: int = 500) -> list[dict[str, Any]]:
    """Ready documents of the knowledge bases in `kb_ids` (what a user can select or ask about), by title."""
    rows = (Document.objects.filter(status=DocumentStatus.READY, kb_id__in=list(kb_ids))
            .order_by("title", "id")[:limit])
    return [{"id": d.id, "title": d.title, "domain": d.domain, "kb": d.kb_id} for d in rows]


# What a title is compared on: its letters and digits, in lower case ("BrightHome returns FAQ" and
# "brighthome-returns-faq" alike). A title of fewer is contained in too many questions to name a document.
_NOT_TITLE_CHARS = re.compile(r"[\W_]+")
NAMING_TITLE_CHARS = 4


def _title_key(text: str) -> str:
    return _NOT_TITLE_CHARS.sub("", text.lower())


def document_named_in(*, text: str, kb_ids: Collection[int]) -> tuple[int, str] | None:
    """The ready document of the knowledge bases in `kb_ids` whose title `text` contains, letters and digits compared
    ("Summarise the BrightHome returns FAQ" names brighthome-returns-faq), as (id, title); the longest such title
    when several are contained; None when none is, or when two documents have that title."""
    said = _title_key(text)
    best: list[tuple[int, str]] = []
    best_size = 0
    rows = Document.objects.filter(status=DocumentStatus.READY, kb_id__in=list(kb_ids)).values_list("id", "title")
    for pk, title in rows.iterator():
        key = _title_key(title)
        if len(key) < max(NAMING_TITLE_CHARS, best_size) or key not in said:
            continue
        if len(key) > best_size:
            best, best_size = [], len(key)
        best.append((pk, title))
    return best[0] if len(best) == 1 else None


def readable_document_ids(*, document_ids: Collection[int], kb_ids: Collection[int]) -> frozenset[int]:
    """Those of `document_ids` that are in one of `kb_ids`."""
    return frozenset(Document.objects.filter(pk__in=list(document_ids), kb_id__in=list(kb_ids))
                     .values_list("pk", flat=True))


def ready_document(*, document_id: int, kb_ids: Collection[int]) -> Document:
    """A ready document of one of `kb_ids`; any other raises Document.DoesNotExist, like an unknown id."""
    return Document.objects.get(pk=document_id, status=DocumentStatus.READY, kb_id__in=list(kb_ids))


def document_parent_chunks(*, document_id: int, kb_ids: Collection[int]) -> list[Chunk]:
    """A document's parent chunks in reading order, if it is in one of `kb_ids`: the material of a direct read."""
    return list(Chunk.objects.filter(document_id=document_id, level=ChunkLevel.PARENT,
                                     document__kb_id__in=list(kb_ids))
                .select_related("document").order_by("ordinal"))


def latest_revisions(*, chunk_ids: list[int]) -> dict[int, int]:
    """The newest revision id of each of `chunk_ids` that was ever edited (absent: never edited)."""
    if not chunk_ids:
        return {}
    rows = (Chunk.revisions.model.objects.filter(id__in=chunk_ids).values("id")
            .annotate(latest=Max("history_id")).values_list("id", "latest"))
    return dict(rows)


def chunk_revision(*, chunk: Chunk, revision_id: int) -> Any:
    """Revision `revision_id` of `chunk`, or None."""
    return chunk.revisions.filter(history_id=revision_id).first()


def chunk_first_revision(*, chunk: Chunk) -> Any:
    """The oldest revision of `chunk` (its text as ingested once it was edited), or None."""
    return chunk.revisions.order_by("history_id").first()
