"""Services that act on stored documents again: retry a failed ingestion, re-index, move to another domain or
knowledge base."""
from __future__ import annotations

import logging

import numpy as np
from django.db import transaction
from django.utils import timezone

from kb.domains.records import knowledge_domain_refresh
from kb.ingestion.chunker import retrieval_text
from kb.ingestion.resume import CHUNKING_KEY
from kb.ingestion.wakeup import wake_worker
from kb.models import Chunk, ChunkLevel, Document, DocumentStatus, KnowledgeBase
from kb.services import IngestError, kb_version_bump, validate_domain
from kb.signals import document_changed

log = logging.getLogger(__name__)

# A document being processed is left alone: its worker would write the old state back.
_AT_REST = (DocumentStatus.READY, DocumentStatus.FAILED, DocumentStatus.PENDING)


def document_retry(*, document: Document) -> bool:
    """Queue a failed document for ingestion again; False (nothing changed) when it had not failed."""
    return _requeue(document, from_statuses=(DocumentStatus.FAILED,))


def document_reindex(*, document: Document) -> bool:
    """Rebuild a ready or failed document's chunks, BM25 entries and vectors from its stored file.

    The worker re-runs the whole ingestion (current chunk sizes and embedder; it removes the old
    entries first) and re-profiles the document for the knowledge map. Until it is ready again
    the document is not searchable. False when it is already queued or being processed.
    """
    return _requeue(document, from_statuses=(DocumentStatus.READY, DocumentStatus.FAILED), rebuild=True)


def _requeue(document: Document, *, from_statuses: tuple[str, ...], rebuild: bool = False) -> bool:
    with transaction.atomic():
        changes = {}
        if rebuild:
            # Without the chunking signature the worker does not resume from the stored chunks:
            # it parses the file again and replaces every chunk, BM25 entry and vector.
            metadata = Document.objects.filter(pk=document.pk).values_list("metadata", flat=True).first() or {}
            changes["metadata"] = {k: v for k, v in metadata.items() if k != CHUNKING_KEY}
        updated = Document.objects.filter(pk=document.pk, status__in=from_statuses).update(
            status=DocumentStatus.PENDING, progress=0, error="", attempts=0, updated_at=timezone.now(), **changes)
        if updated:
            _announce(document, "reindex" if rebuild else "retry", {"status": [document.status, "pending"]})
            # A failed document is not counted in its domain; a queued one is.
            knowledge_domain_refresh(kb_id=document.kb_id, domain_id=document.domain)
            transaction.on_commit(_queue_changed)
    if updated:
        document.refresh_from_db()
    return bool(updated)


def document_move(*, document: Document, domain: str) -> bool:
    """Move a document to another domain; False when it is already there.

    Its index entries carry the domain (searches filter on it), so they are rewritten with the
    stored vectors — nothing is re-embedded; if that fails the document is re-indexed instead.
    Both domains' counts and knowledge-map entries are re-aggregated. A document being processed
    cannot be moved (its worker would write the old domain into the index).
    """
    target = validate_domain(domain)
    source = document.domain
    if target == source:
        return False
    _move(document, {"domain": target}, places=((document.kb_id, source), (document.kb_id, target)))
    return True


def document_move_to_kb(*, document: Document, kb: KnowledgeBase) -> bool:
    """Move a document to another knowledge base; False when it is already there.

    The caller checks that the user may edit both bases. Readers of the old base stop seeing the
    document when this commits (every search re-checks a chunk's base in the database); the index
    entries, which carry the base for filtering, are then rewritten with the stored vectors, as for
    a domain move. Both bases' knowledge maps are re-aggregated and cached answers are dropped.
    """
    source = document.kb_id
    if kb.pk == source:
        return False
    # The caller may edit the target, so it may learn that the target holds this file already.
    if Document.objects.filter(kb=kb, checksum=document.checksum).exists():
        raise IngestError(f"“{kb.name}” already holds this file")
    _move(document, {"kb": kb}, places=((source, document.domain), (kb.pk, document.domain)))
    return True


def _move(document: Document, changes: dict[str, object], *, places: tuple[tuple[int, str], ...]) -> None:
    """Writes `changes` to a document at rest and refreshes the knowledge-map entries of each (base, domain) it
    left or joined; on commit, its index entries get the new placement and those maps are re-aggregated. A
    document being processed cannot move: its worker would write the old placement into the index."""
    with transaction.atomic():
        moved = Document.objects.filter(pk=document.pk, status__in=_AT_REST).update(**changes,
                                                                                   updated_at=timezone.now())
        if not moved:
            raise IngestError(f"“{document.title}” is being indexed; move it when it is ready")
        for kb_id, domain in places:
            knowledge_domain_refresh(kb_id=kb_id, domain_id=domain)
        _announce(document, "move", {field: [_plain(getattr(document, field)), _plain(value)]
                                     for field, value in changes.items()})
        document_id = document.pk
        transaction.on_commit(lambda: _rewrite_index_placement(document_id))
        for kb_id, domain in places:
            transaction.on_commit(lambda kb_id=kb_id, domain=domain: _reaggregate(kb_id, (domain,)))
        transaction.on_commit(kb_version_bump)
    document.refresh_from_db()


def _rewrite_index_placement(document_id: int) -> None:
    """Write the document's current domain and knowledge base into its index entries (vectors reused)."""
    # heavy: the indexes load scipy (about 0.3 s) and Milvus on first use; this module loads at django.setup()
    from docmind.indexes.stores import get_lexical_index, get_vector_store

    document = Document.objects.filter(pk=document_id).first()
    if document is None or document.status != DocumentStatus.READY:
        return  # a queued document is indexed with its new placement; a failed one has nothing searchable
    domain = document.domain
    children = list(Chunk.objects.filter(document_id=document_id, level=ChunkLevel.CHILD)
                    .order_by("ordinal").values_list("id", "context", "content"))
    ids = [pk for pk, _, _ in children]
    try:
        store = get_vector_store()
        vectors = store.fetch(ids)
        with_vector = [pk for pk in ids if pk in vectors]
        if with_vector:
            store.upsert(ids=with_vector, vectors=np.stack([vectors[pk] for pk in with_vector]),
                         document_ids=[document_id] * len(with_vector), domains=[domain] * len(with_vector),
                         kb_ids=[document.kb_id] * len(with_vector))
        # The same text ingestion indexed: the chunk's title/section context line, then its own text.
        get_lexical_index().add(ids=ids, texts=[retrieval_text(context, text) for _, context, text in children],
                                document_ids=[document_id] * len(ids), domains=[domain] * len(ids),
                                kb_ids=[document.kb_id] * len(ids))
    except Exception:
        log.exception("could not move the index entries of document %s; re-indexing it", document_id)
        document_reindex(document=document)


def _reaggregate(kb_id: int, domain_ids: tuple[str, ...]) -> None:
    # The knowledge map is an aid: its failure never undoes a move.
    try:
        # heavy: the domain service loads pydantic and the model client (80 ms); this module loads at django.setup()
        from kb.domains.service import build_domain_service

        service = build_domain_service()
        for domain_id in domain_ids:
            service.on_document_change(domain_id, kb_id=kb_id)
    except Exception:
        log.exception("knowledge map update failed for domains %s", ", ".join(domain_ids))


def _queue_changed() -> None:
    kb_version_bump()

    wake_worker()


def _plain(value: object) -> object:
    return value.pk if isinstance(value, KnowledgeBase) else value


def _announce(document: Document, action: str, changes: dict[str, list[object]]) -> None:
    document_changed.send(sender=Document, document=document, action=action, changes=changes)
