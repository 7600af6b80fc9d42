"""IndexReconciler: compare the database's child chunks with Milvus (vectors and BM25) and repair drift."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from django.db.models import F

from docmind.embeddings import Embedder
from docmind.indexes.vectorstore import KbFieldMissing
from kb.ingestion.chunker import retrieval_text
from kb.ingestion.embed_ahead import embed_ahead
from kb.ingestion.pipeline import BATCH_SIZE, seal
from kb.models import Chunk, ChunkLevel, DocumentStatus

BATCH = BATCH_SIZE


@dataclass
class ReconcileReport:
    missing_vectors: list[int] = field(default_factory=list)
    orphan_vectors: list[int] = field(default_factory=list)
    missing_lexical: list[int] = field(default_factory=list)
    orphan_lexical: list[int] = field(default_factory=list)
    # Chunks (parents and children) of failed documents, and the index entries of those children:
    # a failed document is never searched, so they are dead weight (failing normally removes them).
    failed_chunks: list[int] = field(default_factory=list)
    failed_vectors: list[int] = field(default_factory=list)
    failed_lexical: list[int] = field(default_factory=list)
    # Entries whose knowledge base differs from their document's (searches filter on it, so such an
    # entry is found by the wrong readers); fixed in place by rewriting the entry.
    wrong_kb_vectors: list[int] = field(default_factory=list)
    wrong_kb_lexical: list[int] = field(default_factory=list)
    # Collections made before knowledge bases existed have no kb_id field: only kb_reindex adds it.
    kb_field_missing: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (self.missing_vectors or self.orphan_vectors or self.missing_lexical or self.orphan_lexical
                    or self.failed_chunks or self.failed_vectors or self.failed_lexical or self.wrong_kb_vectors
                    or self.wrong_kb_lexical or self.kb_field_missing)


class IndexReconciler:
    """The database is the system of record: Milvus entries follow it, never the other way round."""

    def __init__(self, *, vectors, lexical) -> None:
        self.vectors = vectors
        self.lexical = lexical

    def inspect(self) -> ReconcileReport:
        # Only documents that finished (or are past chunking) are expected to be fully indexed.
        live = set(Chunk.objects.filter(level=ChunkLevel.CHILD, document__status=DocumentStatus.READY)
                   .values_list("id", flat=True))
        every = set(Chunk.objects.filter(level=ChunkLevel.CHILD).values_list("id", flat=True))
        failed = Chunk.objects.filter(document__status=DocumentStatus.FAILED)
        failed_children = set(failed.filter(level=ChunkLevel.CHILD).values_list("id", flat=True))
        vector_kbs = self._kb_of(self.vectors)
        lexical_kbs = self._kb_of(self.lexical)
        vector_ids = set(vector_kbs) if vector_kbs is not None else self.vectors.all_ids()
        lexical_ids = set(lexical_kbs) if lexical_kbs is not None else self.lexical.all_ids()
        kb_of_chunk = dict(Chunk.objects.filter(level=ChunkLevel.CHILD).values_list("id", "document__kb_id"))
        return ReconcileReport(
            wrong_kb_vectors=_wrong_kb(vector_kbs, kb_of_chunk),
            wrong_kb_lexical=_wrong_kb(lexical_kbs, kb_of_chunk),
            kb_field_missing=[store.collection for store, kbs in ((self.vectors, vector_kbs),
                                                                  (self.lexical, lexical_kbs)) if kbs is None],
            missing_vectors=sorted(live - vector_ids),
            orphan_vectors=sorted(vector_ids - every),
            missing_lexical=sorted(live - lexical_ids),
            orphan_lexical=sorted(lexical_ids - every),
            failed_chunks=sorted(failed.values_list("id", flat=True)),
            failed_vectors=sorted(vector_ids & failed_children),
            failed_lexical=sorted(lexical_ids & failed_children),
        )

    @staticmethod
    def _kb_of(store) -> dict[int, int] | None:
        """Every entry's stored knowledge base, or None when the collection has no kb_id field."""
        try:
            return store.all_kb_ids()
        except KbFieldMissing:
            return None

    def repair(self, report: ReconcileReport, *, embedder: Embedder) -> int:
        # Index entries go before their chunks: if the repair stops half-way, the next inspect
        # still finds what is left (as entries of failed documents or as orphans).
        self.vectors.delete_ids(report.orphan_vectors + report.failed_vectors)
        self.lexical.delete_ids(report.orphan_lexical + report.failed_lexical)
        Chunk.objects.filter(document__status=DocumentStatus.FAILED).delete()
        _index(report.missing_lexical + report.wrong_kb_lexical, lexical=self.lexical)
        _embed(report.missing_vectors, vectors=self.vectors, embedder=embedder)
        _relabel(report.wrong_kb_vectors, vectors=self.vectors, embedder=embedder)
        seal(self.vectors, self.lexical)
        return (len(report.orphan_vectors) + len(report.orphan_lexical) + len(report.missing_lexical)
                + len(report.missing_vectors) + len(report.failed_chunks) + len(report.failed_vectors)
                + len(report.failed_lexical) + len(report.wrong_kb_vectors) + len(report.wrong_kb_lexical))


def _wrong_kb(stored: dict[int, int] | None, kb_of_chunk: dict[int, int]) -> list[int]:
    if stored is None:
        return []
    return sorted(pk for pk, kb_id in stored.items() if pk in kb_of_chunk and kb_of_chunk[pk] != kb_id)


def _rows(ids: Sequence[int]) -> list[dict]:
    return list(Chunk.objects.filter(pk__in=ids).values("id", "content", "context", "document_id", "document__domain",
                                                        "document__kb_id").order_by("id"))


def _relabel(ids: Sequence[int], *, vectors, embedder: Embedder) -> None:
    """Rewrite entries with their document's knowledge base, reusing the stored vectors (an in-place
    upsert: nothing is re-embedded unless a vector is missing)."""
    for start in range(0, len(ids), 500):
        rows = _rows(ids[start:start + 500])
        stored = vectors.fetch([r["id"] for r in rows])
        kept = [r for r in rows if r["id"] in stored]
        if kept:
            vectors.upsert(ids=[r["id"] for r in kept], vectors=np.stack([stored[r["id"]] for r in kept]),
                           document_ids=[r["document_id"] for r in kept], domains=[r["document__domain"] for r in kept],
                           kb_ids=[r["document__kb_id"] for r in kept])
        _embed([r["id"] for r in rows if r["id"] not in stored], vectors=vectors, embedder=embedder)


def _index(ids: Sequence[int], *, lexical) -> None:
    for start in range(0, len(ids), 500):
        rows = _rows(ids[start:start + 500])
        lexical.add(ids=[r["id"] for r in rows], texts=[retrieval_text(r["context"], r["content"]) for r in rows],
                    document_ids=[r["document_id"] for r in rows], domains=[r["document__domain"] for r in rows],
                    kb_ids=[r["document__kb_id"] for r in rows])


def _embed(ids: Sequence[int], *, vectors, embedder: Embedder,
           progress: Callable[[int, int], None] | None = None) -> None:
    starts = range(0, len(ids), BATCH)
    batches = (_rows(ids[start:start + BATCH]) for start in starts)
    texts = lambda rows: [retrieval_text(r["context"], r["content"]) for r in rows]  # noqa: E731
    for start, (rows, matrix) in zip(starts, embed_ahead(embedder.embed_passages, batches, texts=texts), strict=True):
        vectors.upsert(ids=[r["id"] for r in rows], vectors=matrix, document_ids=[r["document_id"] for r in rows],
                       domains=[r["document__domain"] for r in rows], kb_ids=[r["document__kb_id"] for r in rows])
        Chunk.objects.filter(pk__in=[r["id"] for r in rows]).update(vector_id=F("id"))
        if progress is not None and (start // BATCH) % 20 == 0:
            progress(start + len(rows), len(ids))


def reindex_all(*, vectors, lexical, embedder: Embedder, progress: Callable[[int, int], None] | None = None) -> int:
    """Rebuild the (already emptied) vector store and the BM25 index from every stored child chunk."""
    Chunk.objects.filter(level=ChunkLevel.CHILD).update(vector_id=None)
    lexical.reset()
    ids = list(Chunk.objects.filter(level=ChunkLevel.CHILD).exclude(document__status=DocumentStatus.FAILED)
               .order_by("id").values_list("id", flat=True))
    _index(ids, lexical=lexical)
    _embed(ids, vectors=vectors, embedder=embedder, progress=progress)
    seal(vectors, lexical)
    return len(ids)
