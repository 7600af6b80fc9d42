"""Child-chunk vectors in Milvus (a Milvus Lite file by default, a server for a URL), behind VectorStore."""
from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from docmind.indexes.dense_index import DenseIndex
from docmind.indexes.snapshot import IndexSnapshot

log = logging.getLogger(__name__)

CHUNK_COLLECTION = "docmind_chunks"
META_COLLECTION = "docmind_meta"
LOAD_BATCH = 4096
# Reads that must see every write made before them (a copy for the in-process index, a reconcile, a snapshot
# token): Milvus reads with bounded staleness by default, which may leave out the last seconds' inserts.
STRONG = "Strong"
# How long a new collection's indexes may take to be built: an empty collection's are finished at once.
INDEX_WAIT_SECONDS = 60.0


class VectorStoreError(RuntimeError):
    """The vector store is unreachable or answered with an error."""


class EmbedderMismatch(VectorStoreError):
    """The stored vectors were made by another embedder; `manage.py kb_reindex` rebuilds them."""


class KbFieldMissing(VectorStoreError):
    """The collection predates knowledge bases (no kb_id field): a knowledge-base filter cannot be applied
    to it, so searching is refused rather than widened; `manage.py kb_reindex` rebuilds it."""


class VectorStore(Protocol):
    """Vectors of child chunks keyed by chunk id, with document id, domain and knowledge base as
    filterable fields.

    `upsert` replaces vectors of the same ids; `delete_documents` removes every vector of those
    documents; `search` returns up to k (chunk id, cosine similarity) pairs, best first, with the
    domain / document / knowledge-base filters applied inside the search (an empty list matches
    nothing); `fetch` returns the stored vectors of the ids that have one. All raise
    VectorStoreError when the backend fails, KbFieldMissing when a knowledge-base filter cannot be
    applied.
    """

    def upsert(self, *, ids: Sequence[int], vectors: np.ndarray, document_ids: Sequence[int],
               domains: Sequence[str], kb_ids: Sequence[int]) -> None: ...

    def delete_documents(self, document_ids: Sequence[int]) -> None: ...

    def search(self, vector: np.ndarray, *, k: int, domains: Sequence[str] | None = None,
               document_ids: Sequence[int] | None = None,
               kb_ids: Sequence[int] | None = None) -> list[tuple[int, float]]: ...

    def fetch(self, ids: Sequence[int]) -> dict[int, np.ndarray]: ...

    def ping(self) -> bool: ...


def is_lite_uri(uri: str) -> bool:
    """A Milvus Lite file (anything that is not a server URL)."""
    return not uri.startswith(("http://", "https://", "tcp://", "grpc://"))


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def build_filter(*, domains: Sequence[str] | None, document_ids: Sequence[int] | None,
                 kb_ids: Sequence[int] | None = None) -> str:
    """A Milvus boolean expression; values are quoted/cast so user text cannot change the expression.
    The knowledge-base term comes first: kb_id is the partition key, so a Milvus server prunes by it."""
    parts = []
    if kb_ids is not None:
        parts.append(f"kb_id in [{', '.join(str(int(k)) for k in kb_ids)}]")
    if domains is not None:
        parts.append(f"domain in [{', '.join(_quote(str(d)) for d in domains)}]")
    if document_ids is not None:
        parts.append(f"document_id in [{', '.join(str(int(i)) for i in document_ids)}]")
    return " and ".join(parts)


# Milvus Lite swaps a collection's memtable for a fresh one outside its own lock before a flush, so two flushes of
# one collection at once (an explicit flush, or an insert that fills the memtable) can commit out of order and fail
# its "current_seq is monotonic" check. A Lite file belongs to one process, so a lock per (file, collection), shared
# by every store of that file in the process, keeps its writes one at a time; a Milvus server needs none.
_LITE_WRITES: dict[tuple[str, str], threading.Lock] = {}
_LITE_WRITES_GUARD = threading.Lock()
_WRITES = frozenset({"insert", "upsert", "delete", "flush"})


def _lite_write_lock(lite_path: str | None, collection: str) -> threading.Lock | nullcontext:
    if lite_path is None:
        return nullcontext()
    key = (str(Path(lite_path).resolve()), collection)
    with _LITE_WRITES_GUARD:
        return _LITE_WRITES.setdefault(key, threading.Lock())


class MilvusCollection:
    """Plumbing shared by the Milvus-backed stores (vectors here, BM25 in lexical.py): one collection on a
    MilvusClient, which both stores share (one Milvus Lite file, one client); backend errors → VectorStoreError."""

    def __init__(self, *, client: Any, collection: str, lite_path: str | None) -> None:
        """`lite_path`: the Milvus Lite file beside which copies of this collection are saved (None where none
        is: a Milvus server, or a collection whose in-process copy is never saved). Every store of such a
        collection must name it, whether or not it keeps an in-process copy itself: each write clears the token
        of the saved copy, and a store that did not would leave a stale copy valid for the next start."""
        self._client = client
        self.collection = collection
        self._lock = threading.Lock()  # collection set-up and reset only; pymilvus' client is thread-safe
        self._writes = _lite_write_lock(lite_path, collection)
        self._meta_writes = _lite_write_lock(lite_path, META_COLLECTION)
        # With a Milvus Lite file: a write-through in-process copy that answers searches (DenseIndex, Bm25Index).
        self._local: Any = None
        # With a Milvus Lite file: the copy of this collection saved beside it, which every write makes stale.
        self._saved: IndexSnapshot | None = self._snapshot(lite_path) if lite_path else None
        # False for a collection made before knowledge bases existed (see KbFieldMissing).
        self.has_kb_field = True

    def _check_kb_field(self) -> None:
        """Note whether the collection has the kb_id field; the caller holds the lock."""
        fields = self._client.describe_collection(self.collection).get("fields", [])
        self.has_kb_field = any(f.get("name") == "kb_id" for f in fields)
        if not self.has_kb_field:
            log.warning("%s has no kb_id field: knowledge-base searches are refused until "
                        "`python manage.py kb_reindex` rebuilds it", self.collection)

    def _require_kb_field(self) -> None:
        if not self.has_kb_field:
            raise KbFieldMissing(f"{self.collection} was made before knowledge bases and cannot filter by them; "
                                 "run `python manage.py kb_reindex`")

    def all_kb_ids(self) -> dict[int, int]:
        """Every entry's knowledge base, by primary key (kb_reconcile)."""
        self._require_kb_field()
        iterator = self._client.query_iterator(self.collection, batch_size=4096, filter="id >= 0",
                                               output_fields=["id", "kb_id"],
                                               consistency_level=STRONG)
        found: dict[int, int] = {}
        try:
            while batch := iterator.next():
                found.update((int(row["id"]), int(row["kb_id"])) for row in batch)
        finally:
            iterator.close()
        return found

    def all_ids(self) -> set[int]:
        """Every primary key in the collection (kb_reconcile)."""
        iterator = self._client.query_iterator(self.collection, batch_size=4096, filter="id >= 0",
                                               output_fields=["id"],
                                               consistency_level=STRONG)
        ids: set[int] = set()
        try:
            while batch := iterator.next():
                ids.update(int(row["id"]) for row in batch)
        finally:
            iterator.close()
        return ids

    def _create_collection(self, name: str, *, schema: Any, index: Any) -> None:
        """Create a collection with its indexes and return once they are built, like `create_collection(…,
        index_params=…)`, without that call's fixed wait: pymilvus sleeps half a second before its first look at
        each index, so a collection with two indexes took a second to create although an index on a new, empty
        collection is finished at once. The caller loads it."""
        self._client.create_collection(name, schema=schema)
        self._client.create_index(name, index, sync=False)
        deadline = time.monotonic() + INDEX_WAIT_SECONDS
        pending = set(self._client.list_indexes(name))
        while pending:
            for index_name in sorted(pending):
                state = self._client.describe_index(name, index_name).get("state")
                if state == "Failed":
                    raise VectorStoreError(f"Milvus could not build index {index_name} of {name}")
                if state == "Finished":
                    pending.discard(index_name)
            if pending:
                if time.monotonic() > deadline:
                    raise VectorStoreError(f"Milvus did not build the indexes {sorted(pending)} of {name} in time")
                time.sleep(0.05)

    def _ensure_meta(self) -> None:
        """The small key/value collection for the embedder name and snapshot tokens; the caller holds the lock."""
        # heavy: pymilvus (about 1.5 s) loads with the first Milvus client; django.setup() loads this module
        from pymilvus import DataType

        if not self._client.has_collection(META_COLLECTION):
            schema = self._client.create_schema(auto_id=False)
            schema.add_field("key", DataType.VARCHAR, is_primary=True, max_length=128)
            schema.add_field("value", DataType.VARCHAR, max_length=1024)
            schema.add_field("v", DataType.FLOAT_VECTOR, dim=2)  # Milvus needs a vector field
            index = self._client.prepare_index_params()
            index.add_index("v", index_type="AUTOINDEX", metric_type="L2")
            self._create_collection(META_COLLECTION, schema=schema, index=index)
        self._client.load_collection(META_COLLECTION)

    def _meta_get(self, key: str) -> str | None:
        # Strong: the default (bounded) consistency may answer from before a write of the last seconds, and a
        # snapshot token cleared by a write must never read as still set (the stale copy would be restored).
        rows = self._client.query(META_COLLECTION, filter=f"key == {_quote(key)}", output_fields=["value"],
                                  consistency_level=STRONG)
        return rows[0]["value"] if rows else None

    def _meta_set(self, key: str, value: str) -> None:
        with self._meta_writes:
            self._client.upsert(META_COLLECTION, [{"key": key, "value": value, "v": [0.0, 0.0]}])
            self._client.flush(META_COLLECTION)

    def _snapshot(self, lite_path: str) -> IndexSnapshot:
        """Where the in-process copy of this collection is saved: beside the Milvus Lite file it mirrors."""
        key = f"{self.collection}.snapshot"
        return IndexSnapshot(path=Path(lite_path).with_name(Path(lite_path).name + ".snapshots") /
                             f"{self.collection}.npz",
                             get_token=lambda: self._meta_get(key), set_token=lambda token: self._meta_set(key, token))

    def _drop(self) -> None:
        """Drop the collection if it exists; the caller holds the lock and recreates it."""
        if self._client.has_collection(self.collection):
            self._client.drop_collection(self.collection)

    def warm_up(self, *, wait: bool = False) -> None:
        """Load the in-process copy of a Milvus Lite store now (wait) or in the background; no-op without one."""
        if self._local is not None:
            self._local.warm_up(wait=wait)

    def _ready(self) -> bool:
        """Search in process? Until its first load is done (seconds to a minute at 100k rows) Milvus answers."""
        if self._local is None:
            return False
        if not self._local.ready:
            self._local.warm_up()
        return self._local.ready

    def _before_write(self) -> None:
        """Whatever snapshot of this collection was saved stops being valid (the caller holds the locks); done
        here rather than by the in-process copy, so that no write escapes it whatever copy the store keeps."""
        if self._saved is not None:
            self._saved.mark_dirty()

    def _write(self, apply_local: Callable[[Any], None], method: str, *args, **kwargs) -> None:
        """A Milvus write and the same change to the in-process copy, under its lock so that a load never
        misses one; if Milvus fails it may hold part of the write, so the copy reloads on the next search."""
        if self._local is None:
            self._before_write()
            self._call(method, *args, **kwargs)
            return
        with self._local.lock:
            self._before_write()
            try:
                self._call(method, *args, **kwargs)
            except VectorStoreError:
                self._local.invalidate()
                raise
            apply_local(self._local)

    def count_rows(self) -> int:
        """How many rows the collection holds now (strong consistency: the last write counted)."""
        rows = self._client.query(self.collection, filter="id >= 0", output_fields=["count(*)"],
                                  consistency_level=STRONG)
        return int(rows[0]["count(*)"])

    def _call(self, method: str, *args, **kwargs):
        try:
            if method in _WRITES:
                with self._writes:
                    return getattr(self._client, method)(*args, **kwargs)
            return getattr(self._client, method)(*args, **kwargs)
        except Exception as exc:
            raise VectorStoreError(f"Milvus {method} on {self.collection} failed: {exc}") from exc


# pymilvus pings every 10 s even when idle; Milvus Lite's embedded gRPC server keeps gRPC's default
# policy (at most one ping per 5 minutes without data) and answers with a "too_many_pings" GOAWAY that
# grpc logs as an error. The Lite server is a local process, so keepalive has nothing to detect there.
_LITE_GRPC_OPTIONS = {"grpc.keepalive_time_ms": 300_000, "grpc.keepalive_permit_without_calls": False}


def _client_options(uri: str) -> dict:
    return {"grpc_options": dict(_LITE_GRPC_OPTIONS)} if is_lite_uri(uri) else {}


class MilvusVectorStore(MilvusCollection):
    """One code path for Milvus Lite and a Milvus server; pymilvus' client is safe to share between threads."""

    def __init__(self, *, uri: str, dim: int, embedder_name: str, collection: str = CHUNK_COLLECTION,
                 token: str | None = None, check_embedder: bool = True, in_process: bool = True) -> None:
        """`in_process` False keeps even a Milvus Lite file from getting the in-process index, so every
        search is a Milvus search with a filter expression (the leak probe runs that way once)."""
        # heavy: pymilvus (about 1.5 s) loads with the first Milvus client; django.setup() loads this module
        from pymilvus import MilvusClient

        self.uri, self.dim, self.embedder_name = uri, dim, embedder_name
        try:
            client = MilvusClient(uri=uri, token=token or "", **_client_options(uri))
        except Exception as exc:
            hint = ""
            if is_lite_uri(uri):
                hint = (" — a Milvus Lite file can be opened by one process only: stop the running server "
                        "or upload through the API")
            raise VectorStoreError(f"cannot open the vector store at {uri}: {exc}{hint}") from exc
        super().__init__(client=client, collection=collection, lite_path=uri if is_lite_uri(uri) else None)
        # Milvus Lite scans unflushed (growing) rows slowly; flushing after each write keeps search indexed.
        self.is_lite = is_lite_uri(uri)
        # Milvus Lite searches in Python over every row; a Lite file is opened by one process only, so an
        # in-process index written through by this store is exact and consistent. A server searches itself.
        self._ensure(check_embedder=check_embedder)
        if self.is_lite and in_process:
            self._local = DenseIndex(dim=dim, load=self._read_all, snapshot=self._saved, count=self.count_rows)

    @classmethod
    def for_rebuild(cls, *, uri: str, dim: int, embedder_name: str) -> MilvusVectorStore:
        """An emptied store for `embedder_name`, whatever model made the old vectors (kb_reindex)."""
        store = cls(uri=uri, dim=dim, embedder_name=embedder_name, check_embedder=False)
        store.reset(embedder_name=embedder_name, dim=dim)
        return store

    # -- set-up -----------------------------------------------------------------------------------------
    def _ensure(self, *, check_embedder: bool = True) -> None:
        # heavy: pymilvus, as in __init__
        from pymilvus import DataType

        with self._lock:
            self._ensure_meta()
            if not self._client.has_collection(self.collection):
                self._create_chunk_collection(DataType)
            self._client.load_collection(self.collection)
            self._check_kb_field()
            stored = self._meta_get(f"{self.collection}.embedder")
        if stored is None and check_embedder:
            self._meta_set(f"{self.collection}.embedder", self.embedder_name)
        elif check_embedder and stored != self.embedder_name:
            raise EmbedderMismatch(
                f"the vectors in {self.collection} were made by {stored!r} but the configured embedder is "
                f"{self.embedder_name!r}; run `python manage.py kb_reindex` to rebuild them")

    def _create_chunk_collection(self, DataType) -> None:  # noqa: N803 - pymilvus enum passed in
        schema = self._client.create_schema(auto_id=False)
        schema.add_field("id", DataType.INT64, is_primary=True)
        schema.add_field("document_id", DataType.INT64)
        schema.add_field("domain", DataType.VARCHAR, max_length=64)
        # The partition key: a Milvus server keeps each knowledge base's rows together and searches only
        # the partitions a `kb_id in [...]` filter names.
        schema.add_field("kb_id", DataType.INT64, is_partition_key=True)
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=self.dim)
        index = self._client.prepare_index_params()
        index.add_index("vector", index_type="AUTOINDEX", metric_type="COSINE")
        index.add_index("document_id", index_type="INVERTED")
        index.add_index("domain", index_type="INVERTED")
        self._create_collection(self.collection, schema=schema, index=index)
        self.has_kb_field = True

    def probe_write(self) -> None:
        """Write, flush and read back one row of the meta collection: a health probe, since a store that
        still answers reads may refuse writes. Raises VectorStoreError."""
        stamp = uuid.uuid4().hex
        try:
            self._meta_set("healthz.probe", stamp)
            stored = self._meta_get("healthz.probe")
        except Exception as exc:
            raise VectorStoreError(f"Milvus write probe failed: {exc}") from exc
        if stored != stamp:
            raise VectorStoreError("Milvus write probe read back a different value")

    # -- the protocol -----------------------------------------------------------------------------------
    def upsert(self, *, ids: Sequence[int], vectors: np.ndarray, document_ids: Sequence[int],
               domains: Sequence[str], kb_ids: Sequence[int]) -> None:
        if not len(ids):
            return
        self._require_kb_field()
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.shape != (len(ids), self.dim):
            raise ValueError(f"expected vectors of shape ({len(ids)}, {self.dim}), got {vectors.shape}")
        kb_ids = [int(k) for k in kb_ids]
        rows = [{"id": int(i), "document_id": int(d), "domain": str(dom), "kb_id": kb, "vector": v}
                for i, d, dom, kb, v in zip(ids, document_ids, domains, kb_ids, vectors, strict=True)]
        self._write(lambda local: local.upsert(ids=ids, vectors=vectors, document_ids=document_ids, domains=domains,
                                               kb_ids=kb_ids), "upsert", self.collection, rows)

    def flush(self) -> None:
        """Seal written rows so that they are searched through the index (much faster in Milvus Lite)."""
        self._call("flush", self.collection)

    def delete_documents(self, document_ids: Sequence[int]) -> None:
        if not document_ids:
            return
        self._write(lambda local: local.delete_documents(document_ids),
                    "delete", self.collection, filter=build_filter(domains=None, document_ids=document_ids))
        if self.is_lite:
            self.flush()

    def delete_ids(self, ids: Sequence[int]) -> None:
        if ids:
            self._write(lambda local: local.delete_ids(ids), "delete", self.collection, ids=[int(i) for i in ids])

    def search(self, vector: np.ndarray, *, k: int, domains: Sequence[str] | None = None,
               document_ids: Sequence[int] | None = None,
               kb_ids: Sequence[int] | None = None) -> list[tuple[int, float]]:
        if k <= 0:
            raise ValueError("k must be positive")
        if kb_ids is not None:
            self._require_kb_field()
        if any(f is not None and not f for f in (domains, document_ids, kb_ids)):
            return []  # an empty filter list matches nothing
        if self._ready():
            return self._local.search(vector, k=k, domains=domains, document_ids=document_ids, kb_ids=kb_ids)
        expr = build_filter(domains=domains, document_ids=document_ids, kb_ids=kb_ids)
        hits = self._call("search", self.collection, data=[np.asarray(vector, dtype=np.float32)],
                          anns_field="vector", limit=k, filter=expr, search_params={"metric_type": "COSINE"},
                          output_fields=["kb_id"] if kb_ids is not None else ["document_id"])
        if kb_ids is not None:
            # The filter ran inside Milvus; checking each hit's base again costs nothing and guards isolation.
            allowed = {int(x) for x in kb_ids}
            return [(int(h["id"]), float(h["distance"])) for h in hits[0] if int(h["entity"]["kb_id"]) in allowed]
        return [(int(hit["id"]), float(hit["distance"])) for hit in hits[0]]

    def fetch(self, ids: Sequence[int]) -> dict[int, np.ndarray]:
        if not ids:
            return {}
        if self._ready():
            return self._local.fetch(ids)
        rows = self._call("get", self.collection, ids=[int(i) for i in ids], output_fields=["vector"])
        return {int(row["id"]): np.asarray(row["vector"], dtype=np.float32) for row in rows}

    def ping(self) -> bool:
        try:
            self._client.has_collection(self.collection)
            return True
        except Exception:
            return False

    # -- maintenance (kb_reindex; kb_reconcile uses the inherited all_ids) -----------------------------------
    def _read_all(self):
        """Every stored row, in batches, for the in-process index."""
        self._require_kb_field()
        iterator = self._client.query_iterator(self.collection, batch_size=LOAD_BATCH, filter="id >= 0",
                                               output_fields=["id", "document_id", "domain", "kb_id", "vector"],
                                               consistency_level=STRONG)
        try:
            while batch := iterator.next():
                yield ([int(r["id"]) for r in batch], np.asarray([r["vector"] for r in batch], dtype=np.float32),
                       [int(r["document_id"]) for r in batch], [str(r["domain"]) for r in batch],
                       [int(r["kb_id"]) for r in batch])
        finally:
            iterator.close()

    def reset(self, *, embedder_name: str, dim: int) -> None:
        """Drop every vector and recreate the collection for `embedder_name` (kb_reindex)."""
        # heavy: pymilvus, as in __init__
        from pymilvus import DataType

        with self._lock, self._local.lock if self._local is not None else nullcontext():
            self._before_write()
            self._drop()
            self.dim, self.embedder_name = dim, embedder_name
            self._create_chunk_collection(DataType)
            self._client.load_collection(self.collection)
            if self._local is not None:
                self._local.reset(dim=dim)
        self._meta_set(f"{self.collection}.embedder", embedder_name)

    def retire(self) -> None:
        """Stop the in-process copy's background snapshot saves: a new store replaces this one."""
        if self._local is not None:
            self._local.retire()

    @property
    def client(self):
        """The underlying MilvusClient, shared with the lexical index (one Milvus Lite file, one client)."""
        return self._client

    def close(self) -> None:
        self._client.close()

