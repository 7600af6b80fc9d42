"""Where an interrupted ingestion picks up: chunks the database already holds, vectors the store already has."""
from __future__ import annotations

from django.db.models import F

from docmind.indexes.vectorstore import VectorStore
from kb.ingestion.chunker import TextChunker
from kb.models import Chunk, ChunkLevel, Document

# Document metadata key recording the chunk sizes the stored chunks were cut with.
CHUNKING_KEY = "chunking"


def chunking_signature(chunker: TextChunker) -> dict[str, int]:
    return {"parent_chars": chunker.parent_chars, "child_chars": chunker.child_chars}


def stored_children(document: Document, *, chunker: TextChunker) -> list[Chunk] | None:
    """The child chunks an earlier run stored, or None when the file must be parsed and chunked again.

    Chunks and the document's chunk counts are written in one transaction, so stored children
    whose count matches are the complete set. They are reused only when they were cut with the
    current chunk sizes: a size change in between means the operator wants new chunks.
    """
    metadata = Document.objects.filter(pk=document.pk).values_list("metadata", flat=True).first() or {}
    if metadata.get(CHUNKING_KEY) != chunking_signature(chunker):
        return None
    children = list(Chunk.objects.filter(document_id=document.pk, level=ChunkLevel.CHILD).order_by("ordinal"))
    if not children or len(children) != metadata.get("child_chunks"):
        return None
    return children


def unembedded(children: list[Chunk], *, vectors: VectorStore) -> list[Chunk]:
    """The children whose vectors are not in the store yet.

    The store itself is asked rather than trusting `vector_id`: a run killed between an upsert
    and its database update leaves vectors without the mark (they are marked now), and one
    killed before the store persisted a batch leaves marks without vectors (they are redone).
    """
    present = set(vectors.fetch([c.pk for c in children])) if children else set()
    unmarked = [c.pk for c in children if c.pk in present and c.vector_id is None]
    if unmarked:
        Chunk.objects.filter(pk__in=unmarked).update(vector_id=F("id"))
    return [c for c in children if c.pk not in present]
