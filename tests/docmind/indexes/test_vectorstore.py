"""MilvusCollection: the plumbing both Milvus-backed stores share (client errors, id iteration)."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from docmind.indexes.lexical import LEXICAL_COLLECTION, MilvusLexicalIndex
from docmind.indexes.vectorstore import META_COLLECTION, MilvusCollection, MilvusVectorStore, VectorStoreError


class _FailingClient:
    def upsert(self, *args, **kwargs):
        raise ConnectionError("connection refused")


class _Iterator:
    def __init__(self, batches: list[list[dict] | Exception]) -> None:
        self.batches = batches
        self.closed = False

    def next(self) -> list[dict]:
        batch = self.batches.pop(0) if self.batches else []
        if isinstance(batch, Exception):
            raise batch
        return batch

    def close(self) -> None:
        self.closed = True


class _IteratingClient:
    def __init__(self, iterator: _Iterator) -> None:
        self.iterator = iterator

    def query_iterator(self, collection: str, **kwargs) -> _Iterator:
        return self.iterator


def test_a_client_error_becomes_a_vector_store_error_naming_method_and_collection():
    store = MilvusCollection(client=_FailingClient(), collection="docmind_chunks", lite_path=None)
    with pytest.raises(VectorStoreError, match="Milvus upsert on docmind_chunks failed: connection refused"):
        store._call("upsert", "docmind_chunks", [])


def test_all_ids_reads_every_batch_and_closes_the_iterator():
    iterator = _Iterator([[{"id": 1}, {"id": 2}], [{"id": 2}, {"id": 7}]])
    assert MilvusCollection(client=_IteratingClient(iterator), collection="c", lite_path=None).all_ids() == {1, 2, 7}
    assert iterator.closed


def test_all_ids_closes_the_iterator_when_a_batch_fails():
    iterator = _Iterator([[{"id": 1}], RuntimeError("lost connection")])
    with pytest.raises(RuntimeError):
        MilvusCollection(client=_IteratingClient(iterator), collection="c", lite_path=None).all_ids()
    assert iterator.closed


def test_a_snapshot_token_is_read_with_strong_consistency():
    # Bounded consistency may answer from before a write of the last seconds: a token a write has just cleared
    # would read as set, and the next store would restore a copy that misses the write.
    class Recording:
        def __init__(self) -> None:
            self.kwargs: dict = {}

        def query(self, collection: str, **kwargs) -> list[dict]:
            self.kwargs = kwargs
            return [{"value": "token"}]

    client = Recording()
    assert MilvusCollection(client=client, collection="c", lite_path=None)._meta_get("c.snapshot") == "token"
    assert client.kwargs["consistency_level"] == "Strong"


def test_a_milvus_lite_client_does_not_ping_faster_than_the_lite_server_allows(tmp_path):
    store = MilvusVectorStore(uri=str(tmp_path / "lite.db"), dim=4, embedder_name="test")
    options = store._client._handler._grpc_options
    # The Lite server's gRPC policy allows one ping per 5 minutes; faster pings earn a logged GOAWAY.
    assert options["grpc.keepalive_time_ms"] >= 300_000
    assert options["grpc.keepalive_permit_without_calls"] is False


class _IndexingClient:
    """Creates collections and reports each index's state from a script, one state per look."""

    def __init__(self, states: dict[str, list[str]]) -> None:
        self.states = states
        self.calls: list[tuple] = []

    def create_collection(self, name: str, **kwargs) -> None:
        self.calls.append(("create_collection", name, tuple(sorted(kwargs))))

    def create_index(self, name: str, index, **kwargs) -> None:
        self.calls.append(("create_index", name, kwargs.get("sync")))

    def list_indexes(self, name: str) -> list[str]:
        return list(self.states)

    def describe_index(self, name: str, index_name: str) -> dict:
        states = self.states[index_name]
        return {"state": states.pop(0) if len(states) > 1 else states[0]}


def test_a_new_collection_is_returned_once_every_index_is_built():
    client = _IndexingClient({"vector": ["InProgress", "InProgress", "Finished"], "domain": ["Finished"]})
    collection = MilvusCollection(client=client, collection="c", lite_path=None)
    collection._create_collection("c", schema=object(), index=object())
    assert client.calls == [("create_collection", "c", ("schema",)), ("create_index", "c", False)]
    assert client.states == {"vector": ["Finished"], "domain": ["Finished"]}


def test_an_index_milvus_could_not_build_fails_the_collection_set_up():
    client = _IndexingClient({"vector": ["Failed"]})
    collection = MilvusCollection(client=client, collection="c", lite_path=None)
    with pytest.raises(VectorStoreError, match="could not build index vector of c"):
        collection._create_collection("c", schema=object(), index=object())


def test_the_collections_of_a_new_store_have_every_index_built(tmp_path):
    store = MilvusVectorStore(uri=str(tmp_path / "lite.db"), dim=4, embedder_name="test")
    MilvusLexicalIndex(client=store.client, lite_path=store.uri)
    client = store.client
    built = {(name, index): client.describe_index(name, index)["state"]
             for name in (META_COLLECTION, store.collection, LEXICAL_COLLECTION) for index in client.list_indexes(name)}
    assert len(built) == 6 and set(built.values()) == {"Finished"}
    assert {str(client.get_load_state(name)["state"]) for name in client.list_collections()} == {"Loaded"}


def test_stores_of_one_lite_file_writing_and_flushing_at_once_all_succeed(tmp_path):
    uri = str(tmp_path / "lite.db")
    stores = [MilvusVectorStore(uri=uri, dim=4, embedder_name="test", in_process=False) for _ in range(2)]
    errors: list[Exception] = []

    def write(store, first: int) -> None:
        try:
            for pk in range(first, first + 30):
                store.upsert(ids=[pk], vectors=np.ones((1, 4), np.float32), document_ids=[1], domains=["a"],
                             kb_ids=[1])
                store.flush()
        except Exception as exc:  # noqa: BLE001 - every failure of a writer is the finding
            errors.append(exc)

    writers = [threading.Thread(target=write, args=(stores[n % 2], n * 100)) for n in range(4)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()

    assert errors == []
    assert len(stores[0].all_ids()) == 120
