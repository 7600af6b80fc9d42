"""DocumentIngester: one document's stages — prepare (parse → chunk → store → BM25), vectors per batch, complete."""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from django.db import transaction
from django.db.models import F

from docmind.embeddings import Embedder
from docmind.indexes.lexical import LexicalIndex
from docmind.indexes.vectorstore import VectorStore
from docmind.tokens import estimate_tokens
from kb.ingestion.chunker import TextChunker, retrieval_text
from kb.ingestion.embed_ahead import embed_ahead
from kb.ingestion.locations import SpanLocator
from kb.ingestion.parsers.base import ParsedText
from kb.ingestion.parsers.isolated import IsolatedParser
from kb.ingestion.resume import CHUNKING_KEY, chunking_signature, stored_children, unembedded
from kb.models import Chunk, ChunkLevel, Document

log = logging.getLogger(__name__)

STORED = 30
# Child chunks per embedding call. `bench/ingest_bench.py --batch-sizes 16 32 64` measured the same rate for
# all three with two threads (15–17 chunks/s, within the machine's noise); 32 reports progress every couple of
# seconds and keeps the conveyor's lookahead (two batches) short.
BATCH_SIZE = 32


class DocumentGone(RuntimeError):
    """The document (or this version of its chunks) was deleted while it was being ingested."""


@dataclass
class PreparedDocument:
    """A document whose chunks are stored and lexically indexed; `pending` children still need vectors."""

    document: Document
    children: list[Chunk]
    pending: list[Chunk]
    done: int = 0

    def batches(self, size: int) -> list[list[Chunk]]:
        return [self.pending[start:start + size] for start in range(0, len(self.pending), size)]


class DocumentIngester:
    """Turns claimed documents into stored chunks, BM25 entries and vectors, as separate stages.

    Write order is the database first (so lexical search and reconcile can rely on it), then
    the BM25 index (the document is lexically searchable from here on), then vectors in batches
    (semantically searchable as each batch lands). A run on a document an interrupted run left
    behind resumes from its stored chunks and embeds only the children the store lacks. `run`
    chains the stages for one document; kb.ingestion.conveyor chains them across documents, so
    that the embedder never waits and that index writes and embedding batches serve many short
    documents at once.
    """

    def __init__(self, *, embedder: Embedder, vectors: VectorStore, lexical: LexicalIndex, chunker: TextChunker,
                 parse: Callable[[bytes, str], ParsedText | str] | None = None, batch_size: int = BATCH_SIZE,
                 on_progress: Callable[[list[int], int], None] | None = None) -> None:
        if batch_size <= 0:
            raise ValueError("batch_size must be positive")
        self.embedder, self.vectors, self.lexical, self.chunker = embedder, vectors, lexical, chunker
        self.parse = parse or IsolatedParser()
        self.batch_size = batch_size
        self.on_progress = on_progress or (lambda document_ids, progress: None)

    def run(self, *, document: Document) -> int:
        """Ingest `document`; returns its child-chunk count. Raises ParseError, DocumentGone and backend errors."""
        prepared = self.prepare(document=document)
        self.index_lexical([prepared])
        texts = lambda batch: [retrieval_text(c.context, c.content) for c in batch]  # noqa: E731
        for batch, matrix in embed_ahead(self.embedder.embed_passages, prepared.batches(self.batch_size), texts=texts):
            self.store_vectors(prepared, batch, matrix)
        return self.complete(prepared)

    # -- stage 1: text and chunks --------------------------------------------------------------------------
    def prepare(self, *, document: Document) -> PreparedDocument:
        """Parse, chunk and store `document` (or pick up the chunks an interrupted run stored)."""
        children = stored_children(document, chunker=self.chunker)
        if children is None:
            children = self._parse_and_store(document)
            pending = children
        else:
            log.info("document %s: resuming from %d stored chunks", document.pk, len(children))
            pending = unembedded(children, vectors=self.vectors)
        return PreparedDocument(document=document, children=children, pending=list(pending))

    # -- stage 2: BM25, for any number of prepared documents in one write ----------------------------------
    def index_lexical(self, prepared: list[PreparedDocument]) -> None:
        # An upsert, so a resumed run may repeat it for entries an interrupted run already wrote.
        children = [(p.document, c) for p in prepared for c in p.children]
        self.lexical.add(ids=[c.pk for _, c in children],
                         texts=[retrieval_text(c.context, c.content) for _, c in children],
                         document_ids=[d.pk for d, _ in children], domains=[d.domain for d, _ in children],
                         kb_ids=[d.kb_id for d, _ in children])
        if prepared:
            self.on_progress([p.document.pk for p in prepared], STORED)

    # -- stage 3 (after embedding a batch): vectors --------------------------------------------------------
    def store_vectors(self, prepared: PreparedDocument, batch: list[Chunk], matrix: np.ndarray) -> None:
        if self.store_vector_batch([(prepared, c) for c in batch], matrix):
            raise DocumentGone(f"document {prepared.document.pk} was deleted during ingestion")

    def store_vector_batch(self, batch: list[tuple[PreparedDocument, Chunk]],
                           matrix: np.ndarray) -> list[PreparedDocument]:
        """Store one embedding batch's vectors, whatever documents its chunks belong to, in one write; returns
        the documents whose chunks were deleted meanwhile (their vectors are removed again)."""
        ids = [c.pk for _, c in batch]
        self.vectors.upsert(ids=ids, vectors=matrix, document_ids=[p.document.pk for p, _ in batch],
                            domains=[p.document.domain for p, _ in batch], kb_ids=[p.document.kb_id for p, _ in batch])
        # The Milvus primary key is the chunk id. A row not updated: its chunk was deleted meanwhile (document
        # deleted or re-queued), and the delete may have purged the store before this upsert: undo it.
        gone: set[int] = set()
        if Chunk.objects.filter(pk__in=ids).update(vector_id=F("id")) < len(ids):
            alive = set(Chunk.objects.filter(pk__in=ids).values_list("id", flat=True))
            gone = {p.document.pk for p, c in batch if c.pk not in alive}
            self.vectors.delete_ids([c.pk for p, c in batch if p.document.pk in gone])
        documents = {p.document.pk: p for p, _ in batch}
        for pk, prepared in documents.items():
            prepared.done += sum(1 for p, _ in batch if p is prepared)
            total = len(prepared.children)
            if prepared.done < len(prepared.pending) and pk not in gone:
                self.on_progress([pk], STORED + (100 - STORED - 1) * (total - len(prepared.pending) + prepared.done)
                                 // max(1, total))
        return [documents[pk] for pk in gone]

    # -- stage 4 -------------------------------------------------------------------------------------------
    def flush(self) -> None:
        """Seal the written vectors and BM25 rows into indexed segments (one call serves every document written
        since the last). Rows are searchable before: through the in-process copies, or scanned by Milvus."""
        seal(self.vectors, self.lexical)

    def complete(self, prepared: PreparedDocument) -> int:
        self.flush()
        return len(prepared.children)

    def _parse_and_store(self, document: Document) -> list[Chunk]:
        with document.file.open("rb") as handle:
            data = handle.read()
        parsed = self.parse(data, document.file_type)
        if isinstance(parsed, str):
            parsed = ParsedText(parsed)
        # Index entries of earlier chunks (a re-queued document) go before the new chunks are stored. A document
        # without stored chunks has none to remove: each of its runs stores its chunks before indexing them, and
        # a failure deletes both. Skipping the two deletes (and their flushes) matters for short documents.
        earlier = Chunk.objects.filter(document=document).exists()
        if earlier:
            self.vectors.delete_documents([document.pk])
            self.lexical.delete_documents([document.pk])
        return self._store_chunks(document, parsed, replace=earlier)

    def _store_chunks(self, document: Document, parsed: ParsedText, *, replace: bool = True) -> list[Chunk]:
        """`replace`: delete the document's stored chunks first (False when it has none: the delete reads the
        rows it would cascade to first, a query per document)."""
        text = parsed.text
        pieces = self.chunker.split(text, title=document.title)
        locate = SpanLocator(parsed.spans).locate
        with transaction.atomic():
            if replace:
                Chunk.objects.filter(document=document).delete()
            parents = [Chunk(document=document, level=ChunkLevel.PARENT, ordinal=i, content=p.content,
                             char_start=p.start, char_end=p.end, token_count=estimate_tokens(p.content),
                             location=locate(p.start, p.end))
                       for i, p in enumerate(pieces)]
            parents = _bulk_create(parents, document, ChunkLevel.PARENT)
            children: list[Chunk] = []
            for parent, piece in zip(parents, pieces, strict=True):
                for child in piece.children:
                    children.append(Chunk(document=document, parent=parent, level=ChunkLevel.CHILD,
                                          ordinal=len(children), content=child.content, context=piece.context,
                                          char_start=child.start, char_end=child.end,
                                          token_count=estimate_tokens(child.content),
                                          location=locate(child.start, child.end)))
            children = _bulk_create(children, document, ChunkLevel.CHILD)
            metadata = _metadata(document, text, len(parents), len(children))
            if parsed.warnings:
                metadata["parse_warnings"] = parsed.warnings[:20]
            else:
                metadata.pop("parse_warnings", None)
            metadata[CHUNKING_KEY] = chunking_signature(self.chunker)
            Document.objects.filter(pk=document.pk).update(metadata=metadata)
        return children


def _bulk_create(rows: list[Chunk], document: Document, level: int) -> list[Chunk]:
    created = Chunk.objects.bulk_create(rows, batch_size=500)
    if all(row.pk is not None for row in created):
        return created
    # MySQL cannot return ids from a bulk insert: read them back in order.
    return list(Chunk.objects.filter(document=document, level=level).order_by("ordinal"))


def _metadata(document: Document, text: str, parents: int, children: int) -> dict:
    metadata = dict(document.metadata or {})
    metadata.update({"chars": len(text), "parent_chunks": parents, "child_chunks": children})
    return metadata


def seal(*stores: object) -> None:
    """Seal what the stores were written (a store without sealing has no `flush`)."""
    for store in stores:
        flush = getattr(store, "flush", None)
        if flush is not None:
            flush()
