"""DenseIndex: an exact in-process cosine index over the vectors a Milvus Lite store holds."""
from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from docmind.indexes.rowindex import RowIndex, Rows, WriteThroughIndex, rows_arrays, rows_index, top_k
from docmind.indexes.snapshot import IndexSnapshot

log = logging.getLogger(__name__)

# (chunk ids, vectors, document ids, domains, knowledge-base ids)
Batch = tuple[Sequence[int], np.ndarray, Sequence[int], Sequence[str], Sequence[int]]


@dataclass(frozen=True)
class _Version:
    rows: Rows
    matrix: np.ndarray  # unit-length rows; only the first rows.count are part of this version


class DenseIndex(WriteThroughIndex):
    """Brute-force cosine top-k with numpy, kept in step with the store by its writers.

    Milvus Lite searches in Python, visiting every row on every query; one matrix-vector product is
    two orders of magnitude faster at 100k rows and exact. The content is read once from the store
    (`load` yields (ids, vectors, document_ids, domains, kb_ids) batches) on first use; after that every
    write through the store is applied here too, under `lock`, which the store also holds around its
    own write so that a load never misses one. Searches take no lock: they read an immutable version,
    and writers append only beyond its last row or build new arrays.
    """

    kind = "vectors"

    def __init__(self, *, dim: int, load: Callable[[], Iterable[Batch]], snapshot: IndexSnapshot | None = None,
                 count: Callable[[], int] | None = None) -> None:
        super().__init__(load=load, snapshot=snapshot, count=count)
        self.dim = dim
        self._matrix = np.zeros((0, dim), np.float32)
        self._version: _Version | None = None

    def reset(self, *, dim: int) -> None:  # type: ignore[override]
        """Empty, and loaded: the store was just emptied (for vectors of `dim`)."""
        with self.lock:
            self.dim = dim
            super().reset()

    def upsert(self, *, ids: Sequence[int], vectors: np.ndarray, document_ids: Sequence[int],
               domains: Sequence[str], kb_ids: Sequence[int] | None = None) -> None:
        self._apply(lambda: self._append(ids, vectors, document_ids, domains, kb_ids))

    def search(self, vector: np.ndarray, *, k: int, domains: Sequence[str] | None = None,
               document_ids: Sequence[int] | None = None, kb_ids: Sequence[int] | None = None
               ) -> list[tuple[int, float]]:
        version = self._current()
        rows = version.rows
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        query = query / max(float(np.linalg.norm(query)), 1e-12)
        mask = rows.filter_mask(domains=domains, document_ids=document_ids, kb_ids=kb_ids)
        candidates = np.flatnonzero(mask)
        if not len(candidates):
            return []
        if len(candidates) * 4 < rows.count:  # a narrow filter: score only the rows it lets through
            scores = version.matrix[candidates] @ query
        else:
            scores = (version.matrix[:rows.count] @ query)[candidates]
        return [(int(rows.ids[r]), score) for r, score in top_k(scores, candidates, k)]

    def fetch(self, ids: Sequence[int]) -> dict[int, np.ndarray]:
        """Stored vectors (unit length) of the ids present; lock-free like search, so a write never delays it."""
        version = self._current()
        rows = version.rows
        found = np.flatnonzero(rows.alive & np.isin(rows.ids, np.asarray([int(i) for i in ids], dtype=np.int64)))
        return {int(rows.ids[r]): version.matrix[r].copy() for r in found}

    # -- writers, under the lock --------------------------------------------------------------------------
    def _append(self, ids, vectors, document_ids, domains, kb_ids=None) -> None:
        if not len(ids):
            return
        vectors = np.asarray(vectors, dtype=np.float32).reshape(len(ids), self.dim)
        vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        start = self._index.rows.count
        if start + len(ids) > len(self._matrix):
            # A new array: readers keep the old one. Writing in place is safe only beyond their last row.
            grown = np.zeros((max(1024, 2 * (start + len(ids))), self.dim), np.float32)
            grown[:start] = self._matrix[:start]
            self._matrix = grown
        self._matrix[start:start + len(ids)] = vectors
        self._index.rows = self._index.appended(ids=ids, document_ids=document_ids, domains=domains, kb_ids=kb_ids)

    def _delete(self, dead: np.ndarray) -> None:
        if not dead.any():
            return
        self._index.rows = self._index.without(dead)
        if self._index.should_compact():
            self._index.rows, keep = self._index.compacted()
            self._matrix = self._matrix[keep]

    def _publish(self) -> None:
        self._version = _Version(rows=self._index.rows, matrix=self._matrix)

    def _clear(self) -> None:
        self._index = RowIndex()
        self._matrix = np.zeros((0, self.dim), np.float32)

    def _arrays(self, version: _Version) -> dict[str, np.ndarray]:
        arrays, keep = rows_arrays(version.rows)
        arrays["matrix"] = version.matrix[keep]
        return arrays

    def _restore(self, arrays: dict[str, np.ndarray]) -> None:
        matrix = np.ascontiguousarray(arrays["matrix"], dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape != (len(arrays["ids"]), self.dim):
            raise ValueError(f"snapshot vectors have shape {matrix.shape}, expected (rows, {self.dim})")
        self._index, self._matrix = rows_index(arrays), matrix
