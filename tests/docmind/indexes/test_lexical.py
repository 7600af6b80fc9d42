"""MilvusLexicalIndex: added rows are searchable at once; sealing them is left to the writer, once per many writes."""
from docmind.indexes.lexical import MilvusLexicalIndex
from docmind.indexes.stores import get_vector_store


class _CountingFlushes:
    """The shared MilvusClient, counting the flushes sent through it."""

    def __init__(self, client) -> None:
        self.client, self.flushes = client, 0

    def flush(self, *args, **kwargs):
        self.flushes += 1
        return self.client.flush(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.client, name)


def test_added_rows_are_found_by_milvus_before_and_after_they_are_sealed(empty_indexes):
    client = _CountingFlushes(get_vector_store().client)
    # No in-process copy: Milvus answers every search.
    milvus = MilvusLexicalIndex(client=client, lite_path=get_vector_store().uri)
    milvus.add(ids=[1, 2], texts=["熊猫吃竹子", "报销发票"], document_ids=[1, 2], domains=["a", "a"], kb_ids=[1, 1])
    milvus.add(ids=[3], texts=["熊猫宝宝"], document_ids=[3], domains=["a"], kb_ids=[1])

    assert client.flushes == 0
    assert {pk for pk, _ in milvus.search("熊猫", k=5)} == {1, 3}
    milvus.flush()
    assert client.flushes == 1
    assert {pk for pk, _ in milvus.search("熊猫", k=5)} == {1, 3}
