"""docmind_memory through Milvus itself (the path a Milvus server takes), not the in-process copy."""
from __future__ import annotations

import numpy as np
import pytest

from memory.vectors import MilvusMemoryIndex


@pytest.fixture
def milvus_only():
    from docmind.indexes.stores import get_vector_store

    store = get_vector_store()
    index = MilvusMemoryIndex(client=store.client, dim=4, embedder_name="probe", in_process=False,
                              collection="docmind_memory_probe")
    index.reset()
    yield index
    index.reset()


def v(*values: float) -> np.ndarray:
    return np.asarray(values, dtype=np.float32)


def test_search_filters_by_user_and_type_and_delete_is_physical(milvus_only):
    milvus_only.upsert(memory_id=1, user_id=7, memory_type="fact", text="我对花生过敏", vector=v(1, 0, 0, 0))
    milvus_only.upsert(memory_id=2, user_id=8, memory_type="fact", text="someone else", vector=v(1, 0, 0, 0))
    milvus_only.upsert(memory_id=3, user_id=7, memory_type="profile", text="我在上海工作", vector=v(.9, .1, 0, 0))
    assert [pk for pk, _ in milvus_only.search(v(1, 0, 0, 0), user_id=7, k=5, strong=True)] == [1, 3]
    assert [pk for pk, _ in milvus_only.search(v(1, 0, 0, 0), user_id=7, k=5, memory_types=["profile"])] == [3]
    assert milvus_only.texts([1, 3]) == {1: (7, "fact", "我对花生过敏"), 3: (7, "profile", "我在上海工作")}
    milvus_only.delete([1])
    assert [pk for pk, _ in milvus_only.search(v(1, 0, 0, 0), user_id=7, k=5, strong=True)] == [3]
    assert milvus_only.texts([1]) == {}


def test_vectors_of_another_embedder_are_dropped_for_a_rebuild(milvus_only):
    from docmind.indexes.stores import get_vector_store

    milvus_only.upsert(memory_id=1, user_id=7, memory_type="fact", text="x", vector=v(1, 0, 0, 0))
    again = MilvusMemoryIndex(client=get_vector_store().client, dim=4, embedder_name="another", in_process=False,
                              collection="docmind_memory_probe")
    assert again.emptied_for_new_embedder and again.search(v(1, 0, 0, 0), user_id=7, k=5) == []


@pytest.mark.parametrize("in_process", [False, True])
def test_clear_empties_the_index_and_it_takes_new_vectors(in_process):
    from docmind.indexes.stores import get_vector_store

    index = MilvusMemoryIndex(client=get_vector_store().client, dim=4, embedder_name="probe", in_process=in_process,
                              collection="docmind_memory_probe_clear")
    index.reset()
    index.upsert(memory_id=1, user_id=7, memory_type="fact", text="我对花生过敏", vector=v(1, 0, 0, 0))
    assert [pk for pk, _ in index.search(v(1, 0, 0, 0), user_id=7, k=5, strong=True)] == [1]
    index.clear()
    assert index.search(v(1, 0, 0, 0), user_id=7, k=5) == [] and index.texts([1]) == {}
    index.upsert(memory_id=2, user_id=7, memory_type="fact", text="我在上海工作", vector=v(1, 0, 0, 0))
    assert [pk for pk, _ in index.search(v(1, 0, 0, 0), user_id=7, k=5, strong=True)] == [2]
