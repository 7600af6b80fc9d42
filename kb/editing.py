"""Editing a chunk's text by hand: every revision kept (author, time, text), any one restorable, and the
chunk re-embedded and re-indexed in every store so that retrieval sees the new text at once."""
from __future__ import annotations

import difflib
import logging
from typing import Any

from django.db import transaction

from docmind import backends
from docmind.tokens import estimate_tokens
from kb.ingestion.chunker import retrieval_text
from kb.models import Chunk, ChunkLevel, DocumentStatus
from kb.services import IngestError, kb_version_bump
from kb.signals import chunk_edited

log = logging.getLogger(__name__)

MAX_CHUNK_CHARS = 20_000
INGESTED = "ingested"


class ChunkEditError(IngestError):
    """An edit the knowledge base refuses (empty text, a document being indexed…); the message is shown."""


def chunk_edit(*, chunk: Chunk, content: str, user: Any = None, reason: str = "") -> Chunk:
    """Replace a chunk's text, keeping the old one as a revision, and re-index it.

    A child chunk (what search finds and answers cite) is re-embedded and rewritten in the vector store and
    the BM25 index after commit; its text in the parent (what the answer step reads) is replaced too when it
    stands there verbatim. A parent chunk is not indexed itself, so only its text changes. A document that
    is being indexed cannot be edited: its worker would write the old text back.
    """
    content = (content or "").strip()
    if not content:
        raise ChunkEditError("the text must not be empty")
    if len(content) > MAX_CHUNK_CHARS:
        raise ChunkEditError(f"the text is longer than {MAX_CHUNK_CHARS} characters")
    with transaction.atomic():
        chunk = Chunk.objects.select_for_update().select_related("document").get(pk=chunk.pk)
        if chunk.document.status not in (DocumentStatus.READY, DocumentStatus.FAILED):
            raise ChunkEditError(f"“{chunk.document.title}” is being indexed; edit it when it is ready")
        if chunk.content == content:
            return chunk
        _record_ingested_text(chunk)
        old = chunk.content
        _save(chunk, content, user=user, reason=reason or "edit")
        if chunk.level == ChunkLevel.CHILD and chunk.parent_id is not None:
            parent = Chunk.objects.select_for_update().get(pk=chunk.parent_id)
            if parent.content.count(old) == 1:
                _record_ingested_text(parent)
                _save(parent, parent.content.replace(old, content), user=user,
                      reason=f"passage {chunk.pk} edited")

        chunk_edited.send(sender=Chunk, chunk=chunk, user=user, before=old, after=content, reason=reason or "edit")
        if chunk.level == ChunkLevel.CHILD:
            chunk_id = chunk.pk
            transaction.on_commit(lambda: chunk_reindex(chunk_id=chunk_id), robust=True)
        transaction.on_commit(kb_version_bump, robust=True)
    return chunk


def chunk_restore(*, chunk: Chunk, revision_id: int, user: Any = None) -> Chunk:
    """Make the text of revision `revision_id` (one of this chunk's) the current text, as a new revision."""
    revision = chunk.revisions.filter(history_id=revision_id).first()
    if revision is None:
        raise Chunk.DoesNotExist("no such revision of this chunk")
    return chunk_edit(chunk=chunk, content=revision.content, user=user, reason=f"restored revision {revision_id}")


def _record_ingested_text(chunk: Chunk) -> None:
    """Ingestion writes chunks in bulk, which records no revision: before the first edit the text as
    ingested becomes revision one, so it can be restored and older citations can still show it."""
    if not chunk.revisions.exists():
        chunk._change_reason = INGESTED
        chunk._history_user = None
        chunk.save(update_fields=["content"])
        for attr in ("_change_reason", "_history_user"):
            delattr(chunk, attr)


def _save(chunk: Chunk, content: str, *, user: Any, reason: str) -> None:
    chunk.content = content
    chunk.token_count = estimate_tokens(content)
    chunk._change_reason = reason[:200]
    chunk._history_user = user if user is not None and getattr(user, "is_authenticated", False) else None
    chunk.save(update_fields=["content", "token_count"])
    for attr in ("_change_reason", "_history_user"):
        delattr(chunk, attr)


def chunk_reindex(*, chunk_id: int) -> None:
    """Embed a child chunk's current text and write it to the vector store and the BM25 index.

    A failure is logged and leaves the old entries: search joins every hit back to the database, so the
    new text is what is read, only found by the old words; `kb_reindex` or another edit repairs it."""
    # heavy: the indexes load scipy (about 0.3 s) and Milvus on first use, not with this module
    from docmind.indexes.stores import get_lexical_index, get_vector_store

    chunk = Chunk.objects.filter(pk=chunk_id, level=ChunkLevel.CHILD).select_related("document").first()
    if chunk is None or chunk.document.status != DocumentStatus.READY:
        return
    text = retrieval_text(chunk.context, chunk.content)
    document = chunk.document
    try:
        vector = backends.get_embedder().embed_passages([text])
        store = get_vector_store()
        store.upsert(ids=[chunk.pk], vectors=vector, document_ids=[document.pk], domains=[document.domain],
                     kb_ids=[document.kb_id])
        flush = getattr(store, "flush", None)
        if flush is not None:
            flush()
        get_lexical_index().add(ids=[chunk.pk], texts=[text], document_ids=[document.pk],
                                domains=[document.domain], kb_ids=[document.kb_id])
        Chunk.objects.filter(pk=chunk.pk).update(vector_id=chunk.pk)
    except Exception:
        log.exception("could not re-index edited chunk %s", chunk_id)
    kb_version_bump()


def revision_diff(older: str, newer: str) -> str:
    """A unified diff of two revisions' texts, line by line (CJK text is one line per sentence or paragraph)."""
    return "\n".join(difflib.unified_diff(older.splitlines(), newer.splitlines(), "before", "after", lineterm=""))

