"""Many documents in one upload (a zip archive or a folder's files): each file goes through document_create."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath

from django.conf import settings
from django.core.files import File
from django.utils.translation import gettext

from kb import services
from kb.archives import ArchiveError, ArchiveLimits, EntryRefusal, ZipArchiveReader
from kb.ingestion.parsers import SUPPORTED_TYPES
from kb.models import Document, KnowledgeBase

__all__ = ["ArchiveError", "BatchOutcome", "archive_limits", "documents_create_from_archive",
           "documents_create_from_files", "path_title"]


@dataclass
class BatchOutcome:
    """What became of each file: queued (new, or a failed document of the same content queued again with this
    file) or refused with its reason; a file whose content is already in this base otherwise is refused as a
    duplicate naming that document."""

    accepted: list[tuple[str, Document]] = field(default_factory=list)
    refused: list[EntryRefusal] = field(default_factory=list)


def archive_limits() -> ArchiveLimits:
    return ArchiveLimits(max_entries=settings.MAX_ARCHIVE_ENTRIES,
                         max_unpacked_bytes=settings.MAX_ARCHIVE_UNPACKED_BYTES,
                         max_entry_bytes=settings.MAX_UPLOAD_BYTES)


def path_title(path: str) -> str:
    """A document title that keeps the folders: `hr/leave/annual.md` → `hr/leave/annual` (the end if too long)."""
    pure = PurePosixPath(path.replace("\\", "/").strip("/"))
    title = str(pure.with_suffix("")) if pure.suffix else str(pure)
    return title[-255:].lstrip("/") or "untitled"


def documents_create_from_archive(*, archive: File, domain: str | None, user, kb: KnowledgeBase) -> BatchOutcome:
    """Queue every document file of a zip archive, titled by its path inside it.

    The archive as a whole is checked and read before anything is stored, so ArchiveError (or IngestError
    for the domain or the archive's own size) means nothing was created. Past that point a file refused by
    document_create is listed with its reason and the others go on. The caller checked the right to write
    into `kb`.
    """
    domain = services.validate_domain(domain)
    size = archive.size or 0
    if size > settings.MAX_UPLOAD_BYTES:
        raise services.IngestError(gettext("the archive is %(size).1f MB; the limit is %(limit).0f MB")
                                   % {"size": size / 2**20, "limit": settings.MAX_UPLOAD_BYTES / 2**20},
                                   code="too_large")
    archive.seek(0)
    contents = ZipArchiveReader(limits=archive_limits(), supported_types=SUPPORTED_TYPES).run(archive=archive)
    try:
        outcome = BatchOutcome(refused=list(contents.refused))
        for member in contents.members:
            upload = File(member.file, name=PurePosixPath(member.path).name)
            upload.size = member.size
            _create_one(outcome, path=member.path, upload=upload, domain=domain, user=user, kb=kb)
    finally:
        contents.close()
    return outcome


def documents_create_from_files(*, files: list[tuple[str, File]], domain: str | None, user,
                                kb: KnowledgeBase) -> BatchOutcome:
    """Queue uploaded files given with their paths (a folder chosen in the browser), titled by the path."""
    domain = services.validate_domain(domain)
    outcome = BatchOutcome()
    for path, upload in files:
        _create_one(outcome, path=path, upload=upload, domain=domain, user=user, kb=kb)
    return outcome


def _create_one(outcome: BatchOutcome, *, path: str, upload: File, domain: str, user, kb: KnowledgeBase) -> None:
    try:
        document, created = services.document_create(uploaded_file=upload, title=path_title(path), domain=domain,
                                                     user=user, kb=kb)
    except services.IngestError as exc:
        outcome.refused.append(EntryRefusal(path, exc.code, str(exc)))
        return
    if created or document.requeued:
        outcome.accepted.append((path, document))
    else:
        reason = gettext("the same content is already in this knowledge base as “%(title)s”") \
            % {"title": document.title}
        outcome.refused.append(EntryRefusal(path, "duplicate", reason, document_id=document.pk))

