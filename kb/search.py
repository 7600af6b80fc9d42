"""KbSearcher: vector and BM25 search over child chunks, joined back to the database, plus lookups."""
from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from docmind.indexes.lexical import LexicalIndex
from docmind.indexes.stores import get_lexical_index, get_vector_store
from docmind.indexes.vectorstore import VectorStore
from kb.models import Chunk, ChunkLevel, DocumentStatus
from kb.retrieval.types import ScoredChunk, Source

# Hits of documents deleted a moment ago may still be in the index: ask for a few more than k.
_OVERFETCH = 8
_LIVE = (DocumentStatus.PROCESSING, DocumentStatus.READY)


class UnscopedSearch(RuntimeError):
    """A search without a knowledge-base filter: refused, never widened to every knowledge base."""


class KbSearcher:
    """Implements ChunkSearcher, VectorLookup and ParentLookup (kb.retrieval.ports) over Milvus + the ORM.

    Searches run only on a searcher `scoped` to a set of knowledge bases, whose ids go down to every
    store as a filter (the Milvus expression, the in-process indexes); the process-wide searcher
    refuses to search. Every hit is checked against the database too, so a deleted (or failed)
    document, or one of another knowledge base, never shows up even if an index is behind.
    """

    def __init__(self, *, vectors: VectorStore, lexical: LexicalIndex,
                 kb_ids: Collection[int] | None = None) -> None:
        self.vectors = vectors
        self.lexical = lexical
        self.kb_ids = None if kb_ids is None else sorted({int(k) for k in kb_ids})

    def scoped(self, kb_ids: Collection[int]) -> KbSearcher:
        """A searcher over the same stores that sees only the knowledge bases in `kb_ids` (empty: nothing)."""
        if kb_ids is None:
            raise UnscopedSearch("a knowledge-base filter is required")
        return KbSearcher(vectors=self.vectors, lexical=self.lexical, kb_ids=kb_ids)

    def _scope(self) -> list[int]:
        if self.kb_ids is None:
            raise UnscopedSearch("search on a searcher without a knowledge-base filter; use .scoped(kb_ids)")
        return self.kb_ids

    def vector_search(self, query_vector: np.ndarray, *, k: int, domains: Sequence[str] | None = None,
                      document_ids: Sequence[int] | None = None) -> list[ScoredChunk]:
        _check_k(k)
        scope = self._scope()
        if not scope:
            return []
        hits = self.vectors.search(query_vector, k=k + _OVERFETCH, domains=_opt(domains),
                                   document_ids=_opt(document_ids), kb_ids=scope)
        return self._hydrate(hits, "vector", k)

    def lexical_search(self, query: str, *, k: int, domains: Sequence[str] | None = None,
                       document_ids: Sequence[int] | None = None) -> list[ScoredChunk]:
        _check_k(k)
        scope = self._scope()
        if not scope:
            return []
        hits = self.lexical.search(query, k=k + _OVERFETCH, domains=_opt(domains), document_ids=_opt(document_ids),
                                   kb_ids=scope)
        return self._hydrate(hits, "bm25", k)

    def vectors_of(self, chunk_ids: Sequence[str]) -> dict[str, np.ndarray]:
        ids = _int_ids(chunk_ids)
        if not ids:
            return {}
        ids = list(Chunk.objects.filter(pk__in=ids, document__kb_id__in=self._scope()).values_list("id", flat=True))
        return {str(pk): vector for pk, vector in self.vectors.fetch(ids).items()} if ids else {}

    def parents_of(self, chunk_ids: Sequence[str]) -> dict[str, tuple[int, str, dict | None]]:
        ids = _int_ids(chunk_ids)
        rows = (Chunk.objects.filter(pk__in=ids, parent__isnull=False, document__kb_id__in=self._scope())
                .values_list("id", "parent_id", "parent__content", "parent__location"))
        return {str(pk): (parent_id, content, location) for pk, parent_id, content, location in rows}

    def _hydrate(self, hits: list[tuple[int, float]], stage: str, k: int) -> list[ScoredChunk]:
        if not hits:
            return []
        rows = (Chunk.objects.filter(pk__in=[pk for pk, _ in hits], level=ChunkLevel.CHILD,
                                     document__status__in=_LIVE, document__kb_id__in=self._scope())
                .values("id", "content", "context", "document_id", "document__title", "document__domain",
                        "location"))
        by_id = {row["id"]: row for row in rows}
        chunks: list[ScoredChunk] = []
        for pk, score in hits:
            row = by_id.get(pk)
            if row is None:
                continue
            chunk = ScoredChunk(chunk_id=str(pk), content=row["content"], score=score, source=Source.KB,
                                document_id=row["document_id"], document_title=row["document__title"],
                                domain=row["document__domain"], context=row["context"],
                                location=row["location"])
            chunks.append(chunk.with_score(stage, score))
            if len(chunks) == k:
                break
        return chunks


def _check_k(k: int) -> None:
    if k <= 0:
        raise ValueError("k must be positive")


def _opt(values: Sequence | None) -> list | None:
    return None if values is None else list(values)


def _int_ids(chunk_ids: Sequence[str]) -> list[int]:
    return [int(c) for c in chunk_ids if str(c).isdigit()]


def get_searcher() -> KbSearcher:
    """A searcher over the process's stores (cheap: it only holds them, so it never outlives a reset)."""
    return KbSearcher(vectors=get_vector_store(), lexical=get_lexical_index())
