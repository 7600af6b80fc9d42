"""DenseIndex: exact cosine top-k, filters, write-through updates, lazy load and concurrent readers."""
import threading

import numpy as np
import pytest

from docmind.indexes.dense_index import DenseIndex

DIM = 8


def _unit(rng, n):
    m = rng.normal(size=(n, DIM)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def _brute(ids, matrix, query, k):
    scores = matrix @ (query / np.linalg.norm(query))
    order = np.argsort(-scores)[:k]
    return [int(ids[i]) for i in order]


def _index(batches=()):
    return DenseIndex(dim=DIM, load=lambda: iter(batches))


def test_it_loads_from_the_store_on_first_search_and_ranks_exactly():
    rng = np.random.default_rng(1)
    ids, vectors = list(range(100, 400)), _unit(rng, 300)
    loads = []

    def load():
        loads.append(1)
        yield ids[:200], vectors[:200], [i // 10 for i in ids[:200]], ["a"] * 200
        yield ids[200:], vectors[200:], [i // 10 for i in ids[200:]], ["b"] * 100

    index = DenseIndex(dim=DIM, load=load)
    query = rng.normal(size=DIM).astype(np.float32)
    hits = index.search(query, k=10)
    assert [pk for pk, _ in hits] == _brute(ids, vectors, query, 10)
    assert hits[0][1] == pytest.approx(float(vectors[ids.index(hits[0][0])] @ query / np.linalg.norm(query)), abs=1e-5)
    index.search(query, k=3)
    assert loads == [1]


def test_writes_before_the_first_search_are_left_to_the_load():
    rng = np.random.default_rng(2)
    vectors = _unit(rng, 3)
    index = DenseIndex(dim=DIM, load=lambda: iter([([1, 2, 3], vectors, [1, 1, 2], ["a", "a", "b"])]))
    index.upsert(ids=[1], vectors=vectors[:1], document_ids=[1], domains=["a"])  # already in the store
    assert sorted(pk for pk, _ in index.search(vectors[0], k=10)) == [1, 2, 3]


@pytest.mark.parametrize(("domains", "document_ids", "expected"), [
    (["a"], None, {1, 2}),
    (["b", "zzz"], None, {3, 4}),
    (["zzz"], None, set()),
    (None, [20], {2, 3}),
    (["a"], [20], {2}),
])
def test_it_applies_domain_and_document_filters(domains, document_ids, expected):
    rng = np.random.default_rng(3)
    vectors = _unit(rng, 4)
    index = _index([([1, 2, 3, 4], vectors, [10, 20, 20, 30], ["a", "a", "b", "b"])])
    hits = index.search(vectors[0], k=10, domains=domains, document_ids=document_ids)
    assert {pk for pk, _ in hits} == expected


def test_upsert_replaces_and_deletes_remove_rows():
    rng = np.random.default_rng(4)
    vectors = _unit(rng, 4)
    index = _index([([1, 2, 3], vectors[:3], [10, 10, 20], ["a", "a", "a"])])
    index.search(vectors[0], k=1)
    index.upsert(ids=[1], vectors=vectors[3:4], document_ids=[10], domains=["a"])
    assert index.search(vectors[3], k=1)[0] == (1, pytest.approx(1.0, abs=1e-5))
    assert len(index.search(vectors[0], k=10)) == 3
    np.testing.assert_allclose(index.fetch([1, 99])[1], vectors[3], atol=1e-6)
    index.delete_documents([10])
    assert [pk for pk, _ in index.search(vectors[0], k=10)] == [3]
    assert index.fetch([1, 2]) == {}
    index.delete_ids([3])
    assert index.search(vectors[0], k=10) == []


def test_reset_empties_it_and_new_rows_are_searchable():
    rng = np.random.default_rng(5)
    vectors = _unit(rng, 2)
    index = _index([([1], vectors[:1], [1], ["a"])])
    index.search(vectors[0], k=1)
    index.reset(dim=DIM)
    assert index.search(vectors[0], k=1) == []
    index.upsert(ids=[2], vectors=vectors[1:], document_ids=[2], domains=["b"])
    assert [pk for pk, _ in index.search(vectors[1], k=5, domains=["b"])] == [2]


def test_compaction_after_many_deletes_keeps_results_exact():
    rng = np.random.default_rng(6)
    vectors = _unit(rng, 5000)
    ids = np.arange(5000)
    index = _index([(ids.tolist(), vectors, (ids // 10).tolist(), ["a"] * 5000)])
    index.search(vectors[0], k=1)
    index.delete_documents(list(range(0, 400)))  # 4000 rows: past the compaction threshold
    query = rng.normal(size=DIM).astype(np.float32)
    assert [pk for pk, _ in index.search(query, k=20)] == _brute(ids[4000:], vectors[4000:], query, 20)
    assert set(index.fetch([3999, 4000])) == {4000}


def test_searches_stay_consistent_while_a_writer_appends_and_deletes():
    rng = np.random.default_rng(7)
    base = _unit(rng, 2000)
    index = _index([(list(range(2000)), base, [0] * 2000, ["a"] * 2000)])
    index.search(base[0], k=1)
    errors: list[BaseException] = []
    done = threading.Event()

    def writer():
        try:
            for step in range(60):
                new = _unit(rng, 200)
                ids = list(range(10_000 + step * 200, 10_200 + step * 200))
                index.upsert(ids=ids, vectors=new, document_ids=[step + 1] * 200, domains=["b"] * 200)
                if step % 3 == 0:
                    index.delete_documents([step + 1])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            done.set()

    def reader():
        try:
            while not done.is_set():
                hits = index.search(base[5], k=5)
                assert hits[0][0] == 5
                filtered = index.search(base[5], k=50, domains=["b"])
                assert all(pk >= 10_000 for pk, _ in filtered)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=writer)] + [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    live = {pk for pk, _ in index.search(base[0], k=100_000)}
    kept_steps = [s for s in range(60) if s % 3]
    expected = set(range(2000)) | {10_000 + s * 200 + j for s in kept_steps for j in range(200)}
    assert live == expected


def test_warm_up_loads_in_the_background_once():
    rng = np.random.default_rng(8)
    vectors = _unit(rng, 2)
    release, calls = threading.Event(), []

    def load():
        calls.append(1)
        release.wait(10)
        yield [1, 2], vectors, [1, 2], ["a", "a"]

    index = DenseIndex(dim=DIM, load=load)
    index.warm_up()
    index.warm_up()
    assert not index.ready
    release.set()
    index.warm_up(wait=True)
    assert index.ready and calls == [1]
    assert [pk for pk, _ in index.search(vectors[1], k=1)] == [2]


def test_writes_during_a_load_do_not_wait_and_are_applied_on_top_of_it():
    rng = np.random.default_rng(9)
    vectors = _unit(rng, 6)
    reading, release = threading.Event(), threading.Event()

    def slow_load():  # the store's content as read while writes come in
        yield [1, 2, 3], vectors[:3], [1, 1, 2], ["a", "a", "b"]
        reading.set()
        release.wait(10)
        yield [4], vectors[3:4], [3], ["a"]

    index = DenseIndex(dim=DIM, load=slow_load)
    index.warm_up()
    assert reading.wait(10)
    written = threading.Event()

    def write():
        with index.lock:  # as the store holds it around its own write
            index.upsert(ids=[5, 4], vectors=vectors[4:6], document_ids=[3, 3], domains=["a", "a"])
            index.delete_documents([2])
        written.set()

    threading.Thread(target=write).start()
    assert written.wait(5), "a write waited for the load"
    assert not index.ready
    release.set()
    index.warm_up(wait=True)
    hits = dict(index.search(vectors[5], k=10))
    assert set(hits) == {1, 2, 4, 5}  # 3 deleted with document 2; 4 replaced by the later write
    assert hits[4] == pytest.approx(1.0, abs=1e-5)


def test_a_reset_during_a_load_discards_what_the_load_read():
    rng = np.random.default_rng(10)
    vectors = _unit(rng, 2)
    reading, release = threading.Event(), threading.Event()

    def slow_load():
        yield [1], vectors[:1], [1], ["a"]
        reading.set()
        release.wait(10)
        yield [2], vectors[1:], [1], ["a"]

    index = DenseIndex(dim=DIM, load=slow_load)
    index.warm_up()
    assert reading.wait(10)
    index.reset(dim=DIM)
    release.set()
    _join_background_loads()
    assert index.ready
    assert index.search(vectors[0], k=5) == []


def _join_background_loads() -> None:
    for thread in threading.enumerate():
        if thread.name.startswith("docmind-load-"):
            thread.join(10)
            assert not thread.is_alive()


def _settled(memory) -> None:
    """Wait for the save a full load schedules at once, then forget what it wrote: the test starts from here."""
    assert memory.snapshot.wait(10)
    memory.tokens.clear()
    memory.snapshot.path.unlink(missing_ok=True)


class _MemorySnapshot:
    """An IndexSnapshot whose token store is a dict (the real one keeps it in Milvus)."""

    def __init__(self, tmp_path):
        from docmind.indexes.snapshot import IndexSnapshot

        self.tokens = {}
        self.snapshot = IndexSnapshot(path=tmp_path / "dense.npz", get_token=lambda: self.tokens.get("t"),
                                      set_token=lambda token: self.tokens.__setitem__("t", token))


def test_a_saved_snapshot_restores_without_reading_the_store(tmp_path):
    rng = np.random.default_rng(11)
    vectors = _unit(rng, 5)
    memory = _MemorySnapshot(tmp_path)
    first = DenseIndex(dim=DIM, snapshot=memory.snapshot,
                       load=lambda: iter([([1, 2, 3, 4], vectors[:4], [1, 1, 2, 2], ["a", "a", "b", "b"])]))
    first.warm_up(wait=True)
    assert memory.snapshot.wait(10)  # the save the full load schedules at once is over: no race with the test's own
    with first.lock:
        memory.snapshot.mark_dirty()
        first.delete_ids([2])
        first.upsert(ids=[5], vectors=vectors[4:], document_ids=[3], domains=["c"])
    assert first.save_snapshot()
    memory.snapshot.cancel()

    def no_read():
        raise AssertionError("the store was read although the snapshot is valid")

    second = DenseIndex(dim=DIM, snapshot=memory.snapshot, load=no_read)
    query = rng.normal(size=DIM).astype(np.float32)
    for filters in ({}, {"domains": ["c"]}, {"document_ids": [2]}):
        restored, original = second.search(query, k=10, **filters), first.search(query, k=10, **filters)
        assert [pk for pk, _ in restored] == [pk for pk, _ in original]
        assert [s for _, s in restored] == pytest.approx([s for _, s in original], abs=1e-5)
    assert {pk for pk, _ in second.search(query, k=10)} == {1, 3, 4, 5}


def test_a_snapshot_whose_token_holds_but_whose_rows_the_store_does_not_hold_is_read_again(tmp_path):
    rng = np.random.default_rng(12)
    vectors = _unit(rng, 3)
    memory = _MemorySnapshot(tmp_path)
    first = DenseIndex(dim=DIM, snapshot=memory.snapshot,
                       load=lambda: iter([([1, 2], vectors[:2], [1, 1], ["a", "a"])]))
    first.warm_up(wait=True)
    assert memory.snapshot.wait(10)  # the save the full load schedules at once is over: no race with the test's own
    assert first.save_snapshot()
    memory.snapshot.cancel()
    # The store holds a third row that the snapshot lacks, though its token still reads as valid.
    reads = []

    def read():
        reads.append(1)
        yield [1, 2, 3], vectors, [1, 1, 2], ["a", "a", "b"]

    second = DenseIndex(dim=DIM, snapshot=memory.snapshot, load=read, count=lambda: 3)
    found = {pk for pk, _ in second.search(vectors[2], k=10)}
    assert reads == [1] and found == {1, 2, 3}
    # A snapshot that agrees with the store's count is restored without reading the store.
    third = DenseIndex(dim=DIM, snapshot=memory.snapshot, load=lambda: iter(()), count=lambda: 2)
    third.warm_up(wait=True)
    assert {pk for pk, _ in third.search(vectors[0], k=10)} == {1, 2}


def test_a_write_after_the_snapshot_makes_the_next_process_read_the_store(tmp_path):
    rng = np.random.default_rng(12)
    vectors = _unit(rng, 3)
    memory = _MemorySnapshot(tmp_path)
    content = [([1, 2], vectors[:2], [1, 1], ["a", "a"])]
    first = DenseIndex(dim=DIM, snapshot=memory.snapshot, load=lambda: iter(content))
    first.warm_up(wait=True)
    assert memory.snapshot.wait(10)  # the save the full load schedules at once is over: no race with the test's own
    assert first.save_snapshot()
    with first.lock:
        memory.snapshot.mark_dirty()  # the store's write: clears the token the snapshot carries
        first.upsert(ids=[3], vectors=vectors[2:], document_ids=[2], domains=["a"])
    memory.snapshot.cancel()
    content.append(([3], vectors[2:], [2], ["a"]))
    reads = []
    second = DenseIndex(dim=DIM, snapshot=memory.snapshot, load=lambda: reads.append(1) or iter(content))
    assert {pk for pk, _ in second.search(vectors[0], k=10)} == {1, 2, 3}
    assert reads == [1]


def test_a_retired_copy_cancels_its_pending_save_and_never_publishes_a_token(tmp_path):
    rng = np.random.default_rng(13)
    vectors = _unit(rng, 2)
    memory = _MemorySnapshot(tmp_path)
    old = DenseIndex(dim=DIM, snapshot=memory.snapshot, load=lambda: iter([([1, 2], vectors, [1, 1], ["a", "a"])]))
    old.warm_up(wait=True)
    _settled(memory)
    memory.tokens["t"] = "the new store's token"
    memory.snapshot.schedule(old.save_snapshot, delay=60)

    old.retire()

    assert memory.snapshot.wait(10)  # cancelled: over without waiting for its delay
    assert memory.tokens["t"] == "the new store's token"
    assert not old.save_snapshot()
    assert not (tmp_path / "dense.npz").exists()


def test_a_save_already_running_when_its_copy_is_retired_does_not_publish(tmp_path):
    rng = np.random.default_rng(14)
    vectors = _unit(rng, 2)
    memory = _MemorySnapshot(tmp_path)
    old = DenseIndex(dim=DIM, snapshot=memory.snapshot, load=lambda: iter([([1, 2], vectors, [1, 1], ["a", "a"])]))
    old.warm_up(wait=True)
    _settled(memory)
    copied, publish = threading.Event(), threading.Event()
    save = memory.snapshot.save

    def save_after_the_copy(arrays, **kwargs):  # the arrays are copied: the file and token are next
        copied.set()
        assert publish.wait(10)
        return save(arrays, **kwargs)

    memory.snapshot.save = save_after_the_copy
    saved = []
    saver = threading.Thread(target=lambda: saved.append(old.save_snapshot()))
    saver.start()
    assert copied.wait(10)
    old.retire()
    publish.set()
    saver.join(timeout=10)

    assert saved == [False]
    assert "t" not in memory.tokens
