"""`MilvusMemoryIndex`: the `docmind_memory` collection — vectors only, for semantic recall and conflict search.

It stores the truncated text of each active memory with the user id and the memory type as filter
fields; the database stays the record (a hit is read back from it). Invalidation deletes the vector
physically. With a Milvus Lite file an exact in-process copy answers searches, as for the KB chunks.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from contextlib import nullcontext
from typing import Any, Protocol

import numpy as np

from docmind.indexes.dense_index import DenseIndex
from docmind.indexes.vectorstore import LOAD_BATCH, META_COLLECTION, MilvusCollection, VectorStoreError

log = logging.getLogger(__name__)

MEMORY_COLLECTION = "docmind_memory"
TEXT_MAX_BYTES = 8000  # Milvus measures VARCHAR in bytes; 2000 CJK characters fit




class MemoryVectorIndex(Protocol):
    """Vectors of active memories keyed by memory id, filtered by user (and optionally type).

    `upsert` replaces the vector of the same id; `delete` removes vectors physically; `search` returns
    up to k (memory id, cosine) pairs of that user only, best first; `texts` returns the stored
    (user id, type, truncated text) of ids (the fallback when the database is unreachable). All raise
    VectorStoreError when the backend fails.
    """

    def upsert(self, *, memory_id: int, user_id: int, memory_type: str, text: str, vector: np.ndarray) -> None: ...

    def delete(self, ids: Sequence[int]) -> None: ...

    def search(self, vector: np.ndarray, *, user_id: int, k: int, memory_types: Sequence[str] | None = None,
               strong: bool = False) -> list[tuple[int, float]]: ...

    def texts(self, ids: Sequence[int]) -> dict[int, tuple[int, str, str]]: ...


class MilvusMemoryIndex(MilvusCollection):
    def __init__(self, *, client: Any, dim: int, embedder_name: str, in_process: bool,
                 collection: str = MEMORY_COLLECTION) -> None:
        super().__init__(client=client, collection=collection, lite_path=None)  # its in-process copy is never saved
        self.dim, self.embedder_name = dim, embedder_name
        self._local = DenseIndex(dim=dim, load=self._read_all) if in_process else None
        # True when the vectors were made by another embedder and were dropped: the caller re-embeds.
        self.emptied_for_new_embedder = self._ensure()

    def _ensure(self) -> bool:
        # heavy: pymilvus (about 1.5 s) loads with the first Milvus client; django.setup() loads this module
        from pymilvus import DataType

        with self._lock:
            if not self._client.has_collection(self.collection):
                self._create(DataType)
            self._client.load_collection(self.collection)
            rows = self._call("query", META_COLLECTION, filter=f'key == "{self.collection}.embedder"',
                              output_fields=["value"])
            stored = rows[0]["value"] if rows else None
            emptied = stored is not None and stored != self.embedder_name
            if emptied:
                log.warning("memory vectors were made by %s; rebuilding them for %s", stored, self.embedder_name)
                self._drop()
                self._create(DataType)
                self._client.load_collection(self.collection)
            if stored != self.embedder_name:
                self._call("upsert", META_COLLECTION,
                           [{"key": f"{self.collection}.embedder", "value": self.embedder_name, "v": [0.0, 0.0]}])
        return emptied

    def _create(self, DataType) -> None:  # noqa: N803 - pymilvus enum passed in
        schema = self._client.create_schema(auto_id=False)
        schema.add_field("id", DataType.INT64, is_primary=True)
        schema.add_field("user_id", DataType.INT64)
        schema.add_field("memory_type", DataType.VARCHAR, max_length=32)
        schema.add_field("text", DataType.VARCHAR, max_length=TEXT_MAX_BYTES)
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=self.dim)
        index = self._client.prepare_index_params()
        index.add_index("vector", index_type="AUTOINDEX", metric_type="COSINE")
        index.add_index("user_id", index_type="INVERTED")
        self._create_collection(self.collection, schema=schema, index=index)

    def upsert(self, *, memory_id: int, user_id: int, memory_type: str, text: str, vector: np.ndarray) -> None:
        vector = np.asarray(vector, dtype=np.float32).reshape(-1)
        if vector.shape != (self.dim,):
            raise ValueError(f"expected a vector of {self.dim} values, got {vector.shape}")
        text = text.encode("utf-8")[:TEXT_MAX_BYTES].decode("utf-8", "ignore")
        row = {"id": int(memory_id), "user_id": int(user_id), "memory_type": str(memory_type), "text": text,
               "vector": vector}
        self._write(lambda local: local.upsert(ids=[int(memory_id)], vectors=vector.reshape(1, -1),
                                               document_ids=[int(user_id)], domains=[str(memory_type)]),
                    "upsert", self.collection, [row])

    def delete(self, ids: Sequence[int]) -> None:
        if ids:
            self._write(lambda local: local.delete_ids(ids), "delete", self.collection, ids=[int(i) for i in ids])

    def search(self, vector: np.ndarray, *, user_id: int, k: int, memory_types: Sequence[str] | None = None,
               strong: bool = False) -> list[tuple[int, float]]:
        """`strong`: read every write made so far (conflict detection must see the neighbour just saved);
        recall settles for Milvus's default bounded staleness, which is cheaper."""
        if k <= 0:
            raise ValueError("k must be positive")
        types = None if memory_types is None else [str(t) for t in memory_types]
        if types is not None and not types:
            return []
        if self._ready():
            # The in-process copy keeps the user id in its document column and the type in its domain column.
            return self._local.search(vector, k=k, domains=types, document_ids=[int(user_id)])
        expr = f"user_id == {int(user_id)}"
        if types is not None:
            expr += " and memory_type in [" + ", ".join('"' + t.replace('"', "") + '"' for t in types) + "]"
        hits = self._call("search", self.collection, data=[np.asarray(vector, dtype=np.float32)],
                          anns_field="vector", limit=k, filter=expr, search_params={"metric_type": "COSINE"},
                          output_fields=["user_id"], **({"consistency_level": "Strong"} if strong else {}))
        # The filter ran inside Milvus; checking the user again costs nothing and guards isolation.
        return [(int(h["id"]), float(h["distance"])) for h in hits[0] if int(h["entity"]["user_id"]) == int(user_id)]

    def texts(self, ids: Sequence[int]) -> dict[int, tuple[int, str, str]]:
        if not ids:
            return {}
        rows = self._call("get", self.collection, ids=[int(i) for i in ids],
                          output_fields=["user_id", "memory_type", "text"])
        return {int(r["id"]): (int(r["user_id"]), str(r["memory_type"]), str(r["text"])) for r in rows}


    def reset(self) -> None:
        """Drop every memory vector (the caller re-embeds from the database)."""
        # heavy: pymilvus, as in _ensure
        from pymilvus import DataType

        with self._lock, self._local.lock if self._local is not None else nullcontext():
            self._drop()
            self._create(DataType)
            self._client.load_collection(self.collection)
            if self._local is not None:
                self._local.reset(dim=self.dim)

    def clear(self) -> None:
        """Delete every memory vector but keep the collection: a delete by filter takes a few milliseconds, where
        `reset` drops and rebuilds the collection and its indexes (ten times as long in Milvus Lite)."""
        with self._lock, self._local.lock if self._local is not None else nullcontext():
            self._call("delete", self.collection, filter="id >= 0")
            if self._local is not None:
                self._local.reset(dim=self.dim)

    def _read_all(self):
        iterator = self._client.query_iterator(self.collection, batch_size=LOAD_BATCH, filter="id >= 0",
                                               output_fields=["id", "user_id", "memory_type", "vector"])
        try:
            while batch := iterator.next():
                yield ([int(r["id"]) for r in batch], np.asarray([r["vector"] for r in batch], dtype=np.float32),
                       [int(r["user_id"]) for r in batch], [str(r["memory_type"]) for r in batch])
        finally:
            iterator.close()


__all__ = ["MEMORY_COLLECTION", "MemoryVectorIndex", "MilvusMemoryIndex", "VectorStoreError"]
