"""In-process read indexes over Milvus Lite: chosen for a Lite file only, and always equal to Milvus' own answers."""
import numpy as np
import pytest

from docmind.backends import get_embedder
from docmind.indexes.bm25 import Bm25Index
from docmind.indexes.dense_index import DenseIndex
from docmind.indexes.lexical import MilvusLexicalIndex, term_ids
from docmind.indexes.stores import get_lexical_index, get_vector_store
from docmind.indexes.vectorstore import is_lite_uri


def _milvus_vector_hits(store, vector, k, **filters):
    """What Milvus Lite itself answers (the path a Milvus server keeps)."""
    from docmind.indexes.vectorstore import build_filter

    hits = store.client.search(store.collection, data=[np.asarray(vector, np.float32)], anns_field="vector", limit=k,
                               filter=build_filter(domains=filters.get("domains"),
                                                   document_ids=filters.get("document_ids"),
                                                   kb_ids=filters.get("kb_ids")),
                               search_params={"metric_type": "COSINE"})
    return [(int(h["id"]), float(h["distance"])) for h in hits[0]]


def _same(local, milvus):
    assert [pk for pk, _ in local] == [pk for pk, _ in milvus]
    assert [s for _, s in local] == pytest.approx([s for _, s in milvus], abs=1e-4)


@pytest.mark.parametrize(("uri", "lite"), [("./data/milvus.db", True), ("/tmp/x/milvus.db", True),
                                           ("http://milvus:19530", False), ("https://z.cloud", False),
                                           ("tcp://milvus:19530", False)])
def test_only_a_lite_file_gets_the_in_process_indexes(uri, lite):
    assert is_lite_uri(uri) is lite


def test_the_default_store_and_lexical_index_search_in_process():
    assert get_vector_store().is_lite
    assert isinstance(get_vector_store()._local, DenseIndex)
    assert isinstance(get_lexical_index()._local, Bm25Index)
    assert MilvusLexicalIndex(client=get_vector_store().client, lite_path=get_vector_store().uri)._local is None


def test_vector_search_equals_milvus_after_upserts_deletes_and_reset(empty_indexes):
    store = get_vector_store()
    rng = np.random.default_rng(0)
    dim = store.dim
    vectors = rng.normal(size=(60, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = list(range(1, 61))
    store.upsert(ids=ids[:40], vectors=vectors[:40], document_ids=[i // 10 for i in ids[:40]],
                 domains=["a" if i % 2 else "b" for i in ids[:40]], kb_ids=[1 + i % 3 for i in ids[:40]])
    store.flush()
    query = rng.normal(size=dim).astype(np.float32)
    _same(store.search(query, k=10), _milvus_vector_hits(store, query, 10))  # first use: loaded from Milvus
    store.upsert(ids=ids[30:], vectors=vectors[30:][::-1].copy(), document_ids=[i // 10 for i in ids[30:]],
                 domains=["a"] * 30, kb_ids=[1 + i % 3 for i in ids[30:]])  # 30..39 replaced, 40..59 new
    store.flush()
    store.delete_documents([1])
    store.delete_ids([25, 26])
    store.flush()
    for filters in ({}, {"domains": ["a"]}, {"document_ids": [2, 4, 5]}, {"domains": ["b"], "document_ids": [2]},
                    {"kb_ids": [1]}, {"kb_ids": [2, 3], "domains": ["a"]}, {"kb_ids": [99]}):
        _same(store.search(query, k=15, **filters), _milvus_vector_hits(store, query, 15, **filters))
    fetched = store.fetch([31, 15, 25])
    assert set(fetched) == {31}
    np.testing.assert_allclose(fetched[31], vectors[30:][::-1][0], atol=1e-6)
    # A new process: Milvus answers while the in-process index is rebuilt from what it holds.
    store._local.retire()  # as a process that stops: it never saves again
    store._local = DenseIndex(dim=dim, load=store._read_all, snapshot=store._saved, count=store.count_rows)
    _same(store.search(query, k=60), _milvus_vector_hits(store, query, 60))
    _same(store.search(query, k=60, kb_ids=[2]), _milvus_vector_hits(store, query, 60, kb_ids=[2]))
    store.warm_up(wait=True)
    alive = set(range(1, 61)) - set(range(10, 20)) - {25, 26}
    assert {pk for pk, _ in store.search(query, k=60, kb_ids=[2])} == {i for i in alive if i % 3 == 1}
    assert store._local.ready
    _same(store.search(query, k=60), _milvus_vector_hits(store, query, 60))
    embedder = get_embedder()
    store.reset(embedder_name=embedder.name, dim=embedder.dim)
    assert store.search(query, k=5) == [] == _milvus_vector_hits(store, query, 5)


def test_lexical_tokens_and_scores_match_milvus_lite_bm25(empty_indexes):
    """Loaded from Milvus' stored term counts and queried with our analyzer: with Milvus Lite's k1 (1.5) the
    scores are Milvus Lite's own, so tokens and term ids agree."""
    texts = ["大熊猫主要吃竹子，生活在四川的山林里。", "差旅报销需要在出差结束后三十天内提交发票，由部门经理审批。",
             "Rust is a systems programming language with a Borrow Checker.", "熊猫宝宝在成都出生，竹子是熊猫的主食。",
             "发票丢失时，报销需要部门经理审批和说明。"]
    milvus = MilvusLexicalIndex(client=get_vector_store().client, lite_path=get_vector_store().uri)
    milvus.add(ids=[1, 2, 3, 4, 5], texts=texts, document_ids=[1, 1, 2, 3, 3], domains=["a", "a", "b", "b", "b"],
               kb_ids=[1] * 5)
    milvus.flush()  # sealed: Milvus Lite scores rows it still scans with statistics of their own
    local = Bm25Index(terms=term_ids, load=milvus._read_all, k1=1.5)
    for query in ["熊猫吃什么竹子", "报销发票要谁审批", "borrow checker", "大熊猫 熊猫"]:
        _same(local.search(query, k=5), milvus.search(query, k=5))
    _same(local.search("报销 熊猫", k=5, domains=["b"]), milvus.search("报销 熊猫", k=5, domains=["b"]))
    # A second knowledge base: the Milvus expression and the in-process mask let the same rows through.
    # Scores may differ: kb_id is the partition key, and Milvus takes BM25 statistics per partition, the
    # in-process index over every row, so across bases the order may differ too; the rows matched are the same.
    milvus.add(ids=[6, 7], texts=["熊猫报销竹子", "报销熊猫"], document_ids=[4, 4], domains=["b", "b"], kb_ids=[2, 2])
    milvus.flush()
    local = Bm25Index(terms=term_ids, load=milvus._read_all, k1=1.5)
    for kb_ids in ([1], [2], [1, 2], [7]):
        assert ({pk for pk, _ in local.search("报销 熊猫 竹子", k=10, kb_ids=kb_ids)}
                == {pk for pk, _ in milvus.search("报销 熊猫 竹子", k=10, kb_ids=kb_ids)})
    assert {pk for pk, _ in milvus.search("报销 熊猫 竹子", k=5, kb_ids=[2])} == {6, 7}


def test_lexical_index_stays_in_step_with_writes(empty_indexes):
    lexical = get_lexical_index()
    lexical.add(ids=[1, 2], texts=["熊猫吃竹子", "报销发票"], document_ids=[1, 2], domains=["a", "a"], kb_ids=[1, 1])
    assert [pk for pk, _ in lexical.search("熊猫", k=5)] == [1]
    lexical.add(ids=[3, 1], texts=["熊猫宝宝", "差旅报销"], document_ids=[3, 1], domains=["a", "a"], kb_ids=[1, 1])
    assert [pk for pk, _ in lexical.search("熊猫", k=5)] == [3]
    lexical.delete_documents([3])
    lexical.delete_ids([2])
    assert lexical.search("熊猫", k=5) == [] and [pk for pk, _ in lexical.search("报销", k=5)] == [1]
    lexical.reset()
    assert lexical.search("报销", k=5) == []
    assert lexical.all_ids() == set()


def test_after_a_failed_milvus_write_the_indexes_reload_from_milvus(empty_indexes, monkeypatch):
    from docmind.indexes.vectorstore import VectorStoreError

    store, lexical = get_vector_store(), get_lexical_index()
    vector = np.ones(store.dim, np.float32)
    store.upsert(ids=[1], vectors=vector[None], document_ids=[1], domains=["a"], kb_ids=[1])
    lexical.add(ids=[1], texts=["熊猫吃竹子"], document_ids=[1], domains=["a"], kb_ids=[1])
    assert [pk for pk, _ in store.search(vector, k=5)] == [1] == [pk for pk, _ in lexical.search("熊猫", k=5)]

    delete = store.client.delete

    def applied_then_failed(*args, **kwargs):
        delete(*args, **kwargs)
        raise RuntimeError("deadline exceeded")  # the client gave up, Milvus did the delete

    with monkeypatch.context() as patch:
        patch.setattr(store.client, "delete", applied_then_failed)
        with pytest.raises(VectorStoreError):
            store.delete_ids([1])
        with pytest.raises(VectorStoreError):
            lexical.delete_ids([1])
    # The in-process indexes were dropped and read Milvus' state back.
    assert store.search(vector, k=5) == [] and lexical.search("熊猫", k=5) == []


def _no_read():
    raise AssertionError("read from Milvus although the snapshot is valid")


def test_the_next_process_restores_both_indexes_from_snapshots_until_a_write(tmp_path):
    from docmind.indexes.vectorstore import MilvusVectorStore

    # A Lite file of its own: the process's shared indexes save snapshots of their own state on timers, and one
    # firing mid-test would replace this test's snapshot with rows of other tests.
    cached = get_vector_store()
    uri = str(tmp_path / "restore.db")

    def reopen(load=None):  # what a new server process builds over the same Lite file
        vectors_again = MilvusVectorStore(uri=uri, dim=cached.dim, embedder_name=cached.embedder_name)
        lexical_again = MilvusLexicalIndex(client=vectors_again.client, in_process=True, lite_path=uri)
        if load is not None:
            vectors_again._local._load = lexical_again._local._load = load
        for index in (vectors_again, lexical_again):
            index.warm_up(wait=True)
        return vectors_again, lexical_again

    store, lexical = reopen()
    rng = np.random.default_rng(5)
    vectors = rng.normal(size=(30, store.dim)).astype(np.float32)
    ids = list(range(1, 31))
    texts = [f"第{i}条：差旅报销需要在三十天内提交发票。" if i % 2 else f"第{i}条：大熊猫主要吃竹子。" for i in ids]
    store.upsert(ids=ids, vectors=vectors, document_ids=[i // 10 for i in ids], domains=["a"] * 30, kb_ids=[1] * 30)
    lexical.add(ids=ids, texts=texts, document_ids=[i // 10 for i in ids], domains=["a"] * 30, kb_ids=[1] * 30)
    store.delete_ids([3])
    lexical.delete_ids([3])
    for index in (store, lexical):
        assert index._local.save_snapshot()

    query = vectors[4] + 0.1
    store_2, lexical_2 = reopen(load=_no_read)
    _same(store_2.search(query, k=10), store.search(query, k=10))
    _same(lexical_2.search("报销发票", k=10), lexical.search("报销发票", k=10))
    store_2.upsert(ids=[31], vectors=vectors[:1], document_ids=[9], domains=["a"], kb_ids=[1])
    lexical_2.add(ids=[31], texts=["发票报销"], document_ids=[9], domains=["a"], kb_ids=[1])

    store_3, lexical_3 = reopen()
    _same(store_3.search(query, k=10), store_2.search(query, k=10))
    _same(lexical_3.search("报销发票", k=10), lexical_2.search("报销发票", k=10))
    assert 31 in dict(lexical_3.search("报销发票", k=40))


class _LiteFile:
    """A Milvus Lite file of a test's own (the process's shared stores save snapshots of their own on timers) and a
    query vector; `open()` builds the vector store and BM25 index over it as a new server process would."""

    def __init__(self, tmp_path, seed: int) -> None:
        cached = get_vector_store()
        self.uri, self.dim, self.embedder_name = str(tmp_path / "own.db"), cached.dim, cached.embedder_name
        self.vector = np.random.default_rng(seed).normal(size=cached.dim).astype(np.float32)

    def open(self, *, in_process: bool = True):
        from docmind.indexes.vectorstore import MilvusVectorStore

        vectors = MilvusVectorStore(uri=self.uri, dim=self.dim, embedder_name=self.embedder_name,
                                    in_process=in_process)
        return vectors, MilvusLexicalIndex(client=vectors.client, in_process=in_process, lite_path=self.uri)

    def write(self, stores, pk: int) -> None:
        vectors, lexical = stores
        vectors.upsert(ids=[pk], vectors=self.vector[None, :], document_ids=[pk], domains=["a"], kb_ids=[1])
        lexical.add(ids=[pk], texts=[f"第{pk}条：发票报销"], document_ids=[pk], domains=["a"], kb_ids=[1])

    def saved(self, pk: int):
        """Stores with in-process copies, after writing row `pk` and saving both copies as snapshots."""
        stores = self.open()
        self.write(stores, pk)
        for index in stores:
            index.warm_up(wait=True)
            assert index._local.save_snapshot()
        return stores

    def found(self, stores) -> tuple[set[int], set[int]]:
        """The rows each index finds, searched in process (loaded first), not by Milvus."""
        vectors, lexical = stores
        for index in stores:
            index.warm_up(wait=True)
        return {pk for pk, _ in vectors.search(self.vector, k=5)}, {pk for pk, _ in lexical.search("发票报销", k=5)}


def test_a_write_through_a_store_without_an_in_process_copy_makes_a_saved_snapshot_stale(tmp_path):
    lite = _LiteFile(tmp_path, seed=7)
    lite.saved(1)

    lite.write(lite.open(in_process=False), 2)

    assert lite.found(lite.open()) == ({1, 2}, {1, 2})


def test_a_write_makes_the_saved_snapshot_stale_whatever_in_process_copy_the_store_keeps(tmp_path):
    lite = _LiteFile(tmp_path, seed=10)
    mirrored = lite.saved(1)
    dropped = lite.open()
    for index in dropped:
        index._local.retire()
        index._local = None  # its copy dropped: Milvus answers, and the store still writes

    lite.write(dropped, 2)

    assert [index._local._snapshot.load() for index in mirrored] == [None, None]  # token cleared
    assert lite.found(lite.open()) == ({1, 2}, {1, 2})


def test_a_lexical_index_must_name_the_lite_file_its_client_opened():
    with pytest.raises(TypeError, match="lite_path"):
        MilvusLexicalIndex(client=get_vector_store().client)


def test_a_copy_that_misses_another_stores_write_saves_no_snapshot(tmp_path):
    lite = _LiteFile(tmp_path, seed=8)
    first, second = lite.open(), lite.open()
    lite.write(first, 1)
    for index in first:
        index.warm_up(wait=True)
    lite.write(second, 2)  # in Milvus, not in the first store's copies
    for index in first:
        assert not index._local.save_snapshot()
    for index in second:
        index.warm_up(wait=True)  # read from Milvus: both rows
        assert index._local.save_snapshot()
    lite.write(first, 3)  # after the second store's save: its snapshot no longer describes Milvus

    assert lite.found(lite.open()) == ({1, 2, 3}, {1, 2, 3})


def test_a_copy_that_misses_another_stores_write_reads_the_store_again_before_searching(tmp_path):
    lite = _LiteFile(tmp_path, seed=9)
    first, second = lite.open(), lite.open()
    lite.write(first, 1)
    for index in first:
        index.warm_up(wait=True)
    lite.write(second, 2)
    assert lite.found(first) == ({1, 2}, {1, 2})
