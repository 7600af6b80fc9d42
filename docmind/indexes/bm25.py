"""Bm25Index: in-process BM25 over the child-chunk texts a Milvus Lite lexical collection holds."""
from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from docmind.indexes.rowindex import RowIndex, Rows, WriteThroughIndex, rows_arrays, rows_index, top_k
from docmind.indexes.snapshot import IndexSnapshot

# Milvus' defaults for its BM25 function (a server's bm25_k1 / bm25_b).
K1 = 1.2
B = 0.75
# Each add becomes a small segment; past this many they are merged into one (and dead rows dropped).
MAX_SEGMENTS = 16

log = logging.getLogger(__name__)

# (chunk ids, term counts {term id: count} per chunk, document ids, domains, knowledge-base ids)
Batch = tuple[Sequence[int], Sequence[dict[int, float]], Sequence[int], Sequence[str], Sequence[int]]


@dataclass(frozen=True)
class _Segment:
    start: int  # global row of its first row
    tf: sparse.csc_matrix  # rows x terms known when it was built; term columns beyond its width are absent


@dataclass(frozen=True)
class _Version:
    rows: Rows
    segments: tuple[_Segment, ...]
    lengths: np.ndarray  # tokens per row (sum of its term frequencies)
    terms: dict[int, int]  # term id -> column; grows in place, replaced on reset


class Bm25Index(WriteThroughIndex):
    """BM25 (IDF and average length over the live rows, as in Lucene / Milvus) with numpy on term postings.

    `terms` maps a text to the term ids of the Milvus collection's analyzer, and `load` yields the
    term counts Milvus stored, so loading needs no tokenising. Loading, locking and visibility work as
    in docmind.indexes.dense_index.DenseIndex: `lock` is held by the store around its own write and this one,
    searches read an immutable version without a lock.
    """

    kind = "BM25 rows"

    def __init__(self, *, terms: Callable[[str], list[int]], load: Callable[[], Iterable[Batch]],
                 k1: float = K1, b: float = B, snapshot: IndexSnapshot | None = None,
                 count: Callable[[], int] | None = None) -> None:
        super().__init__(load=load, snapshot=snapshot, count=count)
        self.k1, self.b = k1, b
        self._terms_of = terms
        self._clear()
        self._version: _Version | None = None

    def _clear(self) -> None:
        self._index = RowIndex()
        self._terms: dict[int, int] = {}
        self._segments: tuple[_Segment, ...] = ()
        self._lengths = np.zeros(0, np.float32)

    def add(self, *, ids: Sequence[int], texts: Sequence[str], document_ids: Sequence[int],
            domains: Sequence[str], kb_ids: Sequence[int] | None = None) -> None:
        self._apply(lambda: self._append(ids, [Counter(self._terms_of(t)) for t in texts], document_ids, domains,
                                         kb_ids))

    def search(self, query: str, *, k: int, domains: Sequence[str] | None = None,
               document_ids: Sequence[int] | None = None, kb_ids: Sequence[int] | None = None
               ) -> list[tuple[int, float]]:
        version = self._current()
        rows = version.rows
        live = int(rows.alive.sum())
        if not live:
            return []
        avg_length = max(float(version.lengths[rows.alive].sum()) / live, 1e-9)
        allowed = (rows.alive if domains is None and document_ids is None and kb_ids is None
                   else rows.filter_mask(domains=domains, document_ids=document_ids, kb_ids=kb_ids))
        hit_rows, hit_scores = [], []
        for term, weight in Counter(self._terms_of(query)).items():
            column = version.terms.get(term)
            if column is None:
                continue
            postings, tfs = _postings(version.segments, column)
            live_postings = rows.alive[postings]
            df = int(live_postings.sum())
            if not df:
                continue
            idf = math.log((live - df + 0.5) / (df + 0.5) + 1.0)
            keep = allowed[postings]
            postings, tfs = postings[keep], tfs[keep]
            norm = self.k1 * (1.0 - self.b + self.b * version.lengths[postings] / avg_length)
            hit_rows.append(postings)
            hit_scores.append(weight * idf * tfs * (self.k1 + 1.0) / (tfs + norm))
        if not hit_rows:
            return []
        unique, inverse = np.unique(np.concatenate(hit_rows), return_inverse=True)
        scores = np.bincount(inverse, weights=np.concatenate(hit_scores))
        return [(int(rows.ids[r]), score) for r, score in top_k(scores, unique, k) if score > 0]

    # -- writers, under the lock --------------------------------------------------------------------------
    def _append(self, ids, term_counts, document_ids, domains, kb_ids=None) -> None:
        if not len(ids):
            return
        row_numbers, columns, counts = [], [], []
        for row, row_counts in enumerate(term_counts):
            for term, count in row_counts.items():
                row_numbers.append(row)
                columns.append(self._terms.setdefault(term, len(self._terms)))
                counts.append(count)
        tf = sparse.csc_matrix((np.asarray(counts, np.float32), (row_numbers, columns)),
                               shape=(len(ids), len(self._terms)))
        lengths = np.asarray(tf.sum(axis=1), dtype=np.float32).reshape(-1)
        self._segments = (*self._segments, _Segment(start=self._index.rows.count, tf=tf))
        self._lengths = np.concatenate([self._lengths, lengths])
        self._index.rows = self._index.appended(ids=ids, document_ids=document_ids, domains=domains, kb_ids=kb_ids)
        if len(self._segments) > MAX_SEGMENTS:
            self._merge()

    def _delete(self, dead: np.ndarray) -> None:
        if not dead.any():
            return
        self._index.rows = self._index.without(dead)
        if self._index.should_compact():
            self._merge()

    def _merge(self) -> None:
        """One segment for all rows, dropping dead ones."""
        width = len(self._terms)
        merged = sparse.vstack([_widened(s.tf, width) for s in self._segments], format="csr")
        self._index.rows, keep = self._index.compacted()
        self._segments = (_Segment(start=0, tf=merged[keep].tocsc()),)
        self._lengths = self._lengths[keep]

    def _publish(self) -> None:
        self._version = _Version(rows=self._index.rows, segments=self._segments, lengths=self._lengths,
                                terms=self._terms)

    def _arrays(self, version: _Version) -> dict[str, np.ndarray]:
        arrays, keep = rows_arrays(version.rows)
        width = len(version.terms)
        merged = (sparse.vstack([_widened(s.tf, width) for s in version.segments], format="csr")[keep].tocsc()
                  if version.segments else sparse.csc_matrix((0, width), dtype=np.float32))
        arrays.update(tf_data=merged.data, tf_indices=merged.indices, tf_indptr=merged.indptr,
                      tf_shape=np.asarray(merged.shape, np.int64), lengths=version.lengths[keep],
                      terms=np.asarray(sorted(version.terms, key=version.terms.__getitem__), dtype=np.int64))
        return arrays

    def _restore(self, arrays: dict[str, np.ndarray]) -> None:
        rows, width = (int(n) for n in arrays["tf_shape"])
        if rows != len(arrays["ids"]) or width != len(arrays["terms"]) or len(arrays["lengths"]) != rows:
            raise ValueError("BM25 snapshot arrays disagree in size")
        tf = sparse.csc_matrix((arrays["tf_data"].astype(np.float32), arrays["tf_indices"], arrays["tf_indptr"]),
                               shape=(rows, width))
        self._index = rows_index(arrays)
        self._terms = {int(term): column for column, term in enumerate(arrays["terms"].tolist())}
        self._segments = (_Segment(start=0, tf=tf),) if rows else ()
        self._lengths = arrays["lengths"].astype(np.float32)


def _postings(segments: Sequence[_Segment], column: int) -> tuple[np.ndarray, np.ndarray]:
    """Global rows containing term `column` and their term frequencies."""
    rows, tfs = [], []
    for segment in segments:
        matrix = segment.tf
        if column >= matrix.shape[1]:
            continue
        lo, hi = matrix.indptr[column], matrix.indptr[column + 1]
        rows.append(matrix.indices[lo:hi].astype(np.int64) + segment.start)
        tfs.append(matrix.data[lo:hi])
    if not rows:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    return np.concatenate(rows), np.concatenate(tfs)


def _widened(matrix: sparse.csc_matrix, width: int) -> sparse.csc_matrix:
    extra = np.full(width - matrix.shape[1], matrix.indptr[-1], dtype=matrix.indptr.dtype)
    return sparse.csc_matrix((matrix.data, matrix.indices, np.concatenate([matrix.indptr, extra])),
                             shape=(matrix.shape[0], width))
