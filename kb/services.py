"""Every write to the knowledge base: create, ingest, delete documents; keep domain counts true."""
from __future__ import annotations

import hashlib
import logging
import re
import time
from collections.abc import Sequence
from pathlib import Path

from django.conf import settings
from django.core.cache import cache
from django.core.files import File
from django.core.files.base import ContentFile
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext

from docmind.foreground import give_way
from docmind.redact import without_paths
from kb.access import kb_default, readable_kb_ids
from kb.archives import too_large, unsupported_type
from kb.domains import on_document_deleted
from kb.domains.records import knowledge_domain_count_new, knowledge_domain_refresh
from kb.ingestion.parsers import SUPPORTED_TYPES
from kb.ingestion.wakeup import wake_worker
from kb.models import Chunk, Document, DocumentStatus, KbAccess, KbGrant, KnowledgeBase
from kb.pages import forget_pages
from kb.selectors import KB_VERSION_KEY

log = logging.getLogger(__name__)

DEFAULT_DOMAIN = "general"
DOMAIN_PATTERN = r"^[\w.\-]{1,64}$"
_DOMAIN_RE = re.compile(DOMAIN_PATTERN)


class IngestError(ValueError):
    """Input the knowledge base refuses (empty, unsupported, too large…); the message is shown to the user,
    `code` (unsupported, empty, too_large, duplicate, invalid) lets a program tell the kinds apart."""

    def __init__(self, message: str, *, code: str = "invalid") -> None:
        super().__init__(message)
        self.code = code


def kb_version_bump() -> None:
    """Mark the knowledge base as changed (answer caches drop entries made under the old version).

    Best-effort, like every cache use: the write it follows is committed and stays so.
    """
    try:
        cache.set(KB_VERSION_KEY, time.time_ns() // 1000, None)
    except Exception:  # noqa: BLE001
        logging.getLogger("docmind.cache").warning("kb_version_bump: the cache failed", exc_info=True)


def validate_domain(domain: str | None) -> str:
    """The domain name, stripped (the default when empty); IngestError when it is not 1–64 letters, digits,
    "_", "-" or "."."""
    domain = (domain or DEFAULT_DOMAIN).strip()
    if not _DOMAIN_RE.match(domain):
        raise IngestError("domain must be 1–64 letters, digits, '_', '-' or '.'")
    return domain


def _file_type(name: str) -> str:
    suffix = Path(name).suffix.lower().lstrip(".")
    if suffix not in SUPPORTED_TYPES:
        raise IngestError(unsupported_type(suffix, SUPPORTED_TYPES), code="unsupported")
    return suffix


def _checksum(uploaded_file: File) -> str:
    digest = hashlib.sha256()
    uploaded_file.seek(0)
    for block in uploaded_file.chunks():
        digest.update(block)
    uploaded_file.seek(0)
    return digest.hexdigest()


def document_create(*, uploaded_file: File, title: str | None = None, domain: str | None = DEFAULT_DOMAIN,
                    user=None, kb: KnowledgeBase | None = None) -> tuple[Document, bool]:
    """Store an uploaded file as a pending document; the same content again in this base returns the existing one
    (in another base the user may read, it is refused, see below).

    Re-uploading a document whose ingestion failed stores the new file and queues it again (the
    failure may have been transient, e.g. the embedding service being down, or the old file lost).
    Once the row is committed nothing undoes it: the side effects after commit are best-effort.
    `kb` is where it goes (the default knowledge base when None); the caller checked the right to
    write there. The same content already stored in another knowledge base that `user` may read is
    refused with that base's name (one file is one document); a base `user` cannot read is never
    consulted, so an upload reveals nothing about it (the file becomes a document of `kb` as well).
    """
    # An upload is not waited on as a question is: a question being answered in this process goes first; not
    # inside a transaction (the admin's form), whose write lock would hold up every other writer meanwhile.
    if not transaction.get_connection().in_atomic_block:
        give_way()
    kb = kb or kb_default()
    name = Path(uploaded_file.name or "").name
    file_type = _file_type(name)
    domain = validate_domain(domain)
    size = uploaded_file.size or 0
    if size == 0:
        raise IngestError(gettext("the file is empty"), code="empty")
    if size > settings.MAX_UPLOAD_BYTES:
        raise IngestError(too_large(size, settings.MAX_UPLOAD_BYTES), code="too_large")
    title = (title or "").strip()[:255] or Path(name).stem[:255] or "untitled"
    checksum = _checksum(uploaded_file)

    # One query for the usual case, content stored nowhere yet; the two questions below only when it is.
    if Document.objects.filter(checksum=checksum).exists():
        existing = Document.objects.filter(checksum=checksum, kb=kb).first()
        if existing is not None:
            return _existing(existing, uploaded_file, name), False
        _refuse_if_stored_where_readable(checksum=checksum, kb=kb, user=user)
    document = Document(title=title, kb=kb, file_type=file_type, domain=domain, checksum=checksum, size=size,
                        uploaded_by=user if user is not None and user.is_authenticated else None)
    document.file.save(name, uploaded_file, save=False)
    try:
        with transaction.atomic():
            document.save()
            knowledge_domain_count_new(kb_id=kb.pk, domain_id=domain)
            # robust: a failing hook (cache down) is logged and must not reach the handler below,
            # which would delete the file of a row that is already committed.
            transaction.on_commit(_after_change, robust=True)
    except IntegrityError:
        # Two uploads of the same file raced: the other one won; keep its row, drop our copy of the file.
        document.file.delete(save=False)
        winner = Document.objects.get(checksum=checksum, kb=kb)
        return _existing(winner, uploaded_file, name), False
    except Exception:
        document.file.delete(save=False)
        raise
    return document, True


def _refuse_if_stored_where_readable(*, checksum: str, kb: KnowledgeBase, user) -> None:
    """The same file in another base the uploader reads is refused, naming it; bases it cannot read are not
    looked at (without a user — a management command — every base is)."""
    others = Document.objects.filter(checksum=checksum).exclude(kb=kb)
    if user is not None:
        others = others.filter(kb_id__in=readable_kb_ids(user))
    other = others.select_related("kb").order_by("id").first()
    if other is not None:
        raise IngestError(gettext("this file is already stored in the knowledge base “%(kb)s” as “%(title)s”")
                          % {"kb": other.kb.name, "title": other.title}, code="duplicate")


def _existing(document: Document, uploaded_file: File, name: str) -> Document:
    """The document already stored with this content; a failed one takes the new file and is queued again."""
    if document.status != DocumentStatus.FAILED:
        return document
    storage = document.file.storage
    old_name = document.file.name
    # A new name: the old file may be missing or damaged, and is removed only after the row points away from it.
    new_name = storage.save(document.file.field.generate_filename(document, name), uploaded_file)
    requeued = Document.objects.filter(pk=document.pk, status=DocumentStatus.FAILED).update(
        file=new_name, status=DocumentStatus.PENDING, progress=0, error="", attempts=0)
    if not requeued:  # another upload requeued it first; its file stands
        storage.delete(new_name)
    elif old_name and old_name != new_name:
        transaction.on_commit(lambda: storage.delete(old_name), robust=True)
    document.refresh_from_db()
    if requeued:
        document.requeued = True
        transaction.on_commit(_after_change, robust=True)
    return document


def document_ingest_path(*, path: Path, domain: str | None = DEFAULT_DOMAIN, title: str | None = None,
                         user=None, kb: KnowledgeBase | None = None) -> tuple[Document, bool]:
    """Queue a file from the server's disk (the ingest command checks the allowed roots first)."""
    path = Path(path)
    if not path.is_file():
        raise IngestError(f"{path} is not a file")
    with path.open("rb") as handle:
        return document_create(uploaded_file=File(handle, name=path.name), title=title, domain=domain, user=user,
                               kb=kb)


def document_ingest_text(*, title: str, text: str, domain: str | None = DEFAULT_DOMAIN, filename: str | None = None,
                         user=None, kb: KnowledgeBase | None = None) -> tuple[Document, bool]:
    """Queue a text as a .txt document (evaluation sets, demo data)."""
    if not text.strip():
        raise IngestError("the text is empty")
    name = filename or (re.sub(r"[^\w\-]+", "_", title).strip("_")[:80] or "text") + ".txt"
    if Path(name).suffix == "":
        name += ".txt"
    return document_create(uploaded_file=ContentFile(text.encode("utf-8"), name=name), title=title,
                           domain=domain, user=user, kb=kb)


def document_delete(*, document: Document) -> None:
    """Delete a document with its chunks (database first), then its vectors, BM25 entries and file."""
    document_id, domain, kb_id, file = document.pk, document.domain, document.kb_id, document.file
    with transaction.atomic():
        document.delete()
        knowledge_domain_refresh(kb_id=kb_id, domain_id=domain)
        transaction.on_commit(lambda: _purge_index(document_id, file), robust=True)
        transaction.on_commit(lambda: _knowledge_map_changed(kb_id, domain), robust=True)
        transaction.on_commit(_after_change, robust=True)


def _purge_index(document_id: int, file) -> None:
    # heavy: the indexes load scipy (about 0.3 s) and Milvus on first use; this module loads at django.setup()
    from docmind.indexes.stores import get_lexical_index, get_vector_store

    # Search joins hits back to the database, so a failure here never shows a deleted or failed
    # document; the leftovers are what `kb_reconcile --repair` removes.
    try:
        get_vector_store().delete_documents([document_id])
        get_lexical_index().delete_documents([document_id])
    except Exception:
        log.exception("could not remove the index entries of deleted or failed document %s", document_id)
    if file:
        file.delete(save=False)

    forget_pages(document_id)


def _knowledge_map_changed(kb_id: int, domain_id: str) -> None:
    # Re-aggregate the domain's when_to_retrieve; the map is an aid, so never fail the delete.
    try:
        on_document_deleted(domain_id, kb_id=kb_id)
    except Exception:
        log.exception("knowledge map update failed for domain %s", domain_id)


def document_set_progress(*, document_ids: Sequence[int], progress: int) -> None:
    """One write for every document of an ingestion step (documents are indexed and embedded many at a time)."""
    # updated_at doubles as the job's heartbeat: a processing row that stops moving belongs to a dead worker.
    Document.objects.filter(pk__in=list(document_ids)).update(progress=max(0, min(100, progress)),
                                                              updated_at=timezone.now())


def documents_mark_ready(*, document_ids: Sequence[int]) -> frozenset[int]:
    """Finish processed documents, in one write for all of them; returns those marked (not the ones deleted or
    re-queued meanwhile)."""
    with transaction.atomic():
        processing = Document.objects.filter(pk__in=list(document_ids), status=DocumentStatus.PROCESSING)
        # Locked for the UPDATE that follows (a no-op on SQLite, whose transaction holds the write lock already).
        marked = frozenset(processing.select_for_update().values_list("pk", flat=True))
        if marked:
            Document.objects.filter(pk__in=marked).update(status=DocumentStatus.READY, progress=100, error="",
                                                          updated_at=timezone.now())
            transaction.on_commit(kb_version_bump, robust=True)
    return marked


def document_requeue_interrupted(*, document_id: int) -> None:
    """A document a dead process left in `processing` goes back to the queue (unless it moved on meanwhile)."""
    Document.objects.filter(pk=document_id, status=DocumentStatus.PROCESSING).update(
        status=DocumentStatus.PENDING, progress=0)


def document_mark_failed(*, document_id: int, reason: str) -> None:
    """Fail a document with a reason members may read, dropping whatever it had indexed so far.

    The reason never carries a server path (the log has the detail). A failed document is never
    searched, so its chunks, vectors and BM25 entries are dead weight; a retry parses it again
    from the file.
    """
    with transaction.atomic():
        updated = Document.objects.filter(pk=document_id).update(status=DocumentStatus.FAILED,
                                                                 error=without_paths(reason)[:2000],
                                                                 updated_at=timezone.now())
        Chunk.objects.filter(document_id=document_id).delete()
        row = Document.objects.filter(pk=document_id).values_list("kb_id", "domain").first()
        if updated and row:
            knowledge_domain_refresh(kb_id=row[0], domain_id=row[1])
        if updated:
            transaction.on_commit(lambda: _purge_index(document_id, None), robust=True)
        transaction.on_commit(_after_change, robust=True)


def document_claim(*, document_id: int) -> bool:
    """Take a pending document for processing; exactly one caller (thread or process) wins."""
    return Document.objects.filter(pk=document_id, status=DocumentStatus.PENDING).update(
        status=DocumentStatus.PROCESSING, progress=0, error="", attempts=F("attempts") + 1,
        updated_at=timezone.now()) == 1


def _after_change() -> None:
    kb_version_bump()

    wake_worker()


def documents_requeue(*, statuses: tuple[str, ...] = (DocumentStatus.READY,)) -> int:
    """Queue documents for processing again (a chunker change): each is re-parsed, re-chunked and
    re-indexed from its stored file by the ingestion worker (or the caller draining the queue)."""
    with transaction.atomic():
        count = Document.objects.filter(status__in=statuses).update(
            status=DocumentStatus.PENDING, progress=0, attempts=0, error="", updated_at=timezone.now())
        transaction.on_commit(_after_change)
    return count


# -- knowledge bases and their grants ---------------------------------------------------------------------
class KbNameTaken(IngestError):
    """Another knowledge base already has the name: a conflict with what exists, not a malformed request."""


def kb_create(*, name: str, description: str = "", owner=None) -> KnowledgeBase:
    """A new knowledge base; its creator gets `edit` on it (an admin sees every base anyway)."""
    name = (name or "").strip()
    if not name or len(name) > 128:
        raise IngestError("name must be 1–128 characters")
    with transaction.atomic():
        if KnowledgeBase.objects.filter(name=name).exists():
            raise KbNameTaken("a knowledge base with this name already exists")
        kb = KnowledgeBase.objects.create(name=name, description=(description or "").strip(),
                                          owner=owner if owner is not None and owner.is_authenticated else None)
        if kb.owner is not None:
            KbGrant.objects.create(kb=kb, user=kb.owner, access=KbAccess.EDIT)
    return kb


def kb_update(*, kb: KnowledgeBase, name: str | None = None, description: str | None = None) -> KnowledgeBase:
    if name is not None:
        name = name.strip()
        if not name or len(name) > 128:
            raise IngestError("name must be 1–128 characters")
        if KnowledgeBase.objects.filter(name=name).exclude(pk=kb.pk).exists():
            raise KbNameTaken("a knowledge base with this name already exists")
        kb.name = name
    if description is not None:
        kb.description = description.strip()
    kb.save()
    return kb


def kb_delete(*, kb: KnowledgeBase) -> None:
    """Delete an empty, non-default knowledge base; documents are never deleted as a side effect."""
    if kb.is_default:
        raise IngestError("the default knowledge base cannot be deleted")
    if Document.objects.filter(kb=kb).exists():
        raise IngestError("the knowledge base still holds documents; delete or move them first")
    with transaction.atomic():
        kb.delete()
        transaction.on_commit(kb_version_bump, robust=True)


def kb_grant(*, kb: KnowledgeBase, access: str, user=None, group=None):
    """Give `user` or `group` view, read or edit access (replacing an earlier grant of the same holder)."""
    if (user is None) == (group is None):
        raise IngestError("give exactly one of user or group")
    if access not in KbAccess.values:
        raise IngestError("access must be view, read or edit")
    with transaction.atomic():
        grant, _ = KbGrant.objects.update_or_create(kb=kb, user=user, group=group, defaults={"access": access})
        transaction.on_commit(kb_version_bump, robust=True)
    return grant


def kb_revoke(*, kb: KnowledgeBase, user=None, group=None) -> bool:
    """Remove the grant of `user` or `group`; answers cached under it stop being served at once."""
    if (user is None) == (group is None):
        raise IngestError("give exactly one of user or group")
    with transaction.atomic():
        deleted, _ = KbGrant.objects.filter(kb=kb, user=user, group=group).delete()
        # The semantic answer cache keys on the version: no answer made before the revoke is replayed.
        transaction.on_commit(kb_version_bump, robust=True)
    return bool(deleted)
