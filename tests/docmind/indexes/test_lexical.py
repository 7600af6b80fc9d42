"""MilvusLexicalIndex: added rows are searchable at once; sealing them is left to the writer, once per many writes;
a text is cut into words once for Milvus Lite's BM25 function and the in-process copy."""
from collections import Counter

from docmind.indexes import lexical
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


def test_a_written_text_is_cut_once_for_milvus_lite_and_the_in_process_copy(empty_indexes, monkeypatch):
    store = get_vector_store()
    index = MilvusLexicalIndex(client=store.client, lite_path=store.uri, in_process=True)
    index._local.warm_up(wait=True)  # loaded (empty) before the write, so the write is applied to it at once
    # heavy: milvus_lite's analyzer, loaded with the collection
    from milvus_lite.analyzer.jieba_analyzer import JiebaAnalyzer

    cuts = Counter()
    own, lites = lexical.analyze, JiebaAnalyzer.tokenize

    def counting(text):
        cuts[text] += 1
        return own(text)

    def counting_lite(analyzer, text):
        cuts[text] += 1
        return lites(analyzer, text)

    monkeypatch.setattr(lexical, "analyze", counting)
    monkeypatch.setattr(JiebaAnalyzer, "tokenize", counting_lite)
    text = "员工出差结束后十五天内提交差旅报销单据"
    index.add(ids=[7], texts=[text], document_ids=[7], domains=["a"], kb_ids=[1])

    assert cuts[text] == 1
    assert [pk for pk, _ in index.search("差旅报销", k=5)] == [7]
    stored = next(iter(index._read_all()))[1][0]
    assert {int(term): count for term, count in stored.items()} == dict(Counter(lexical.term_ids(text)))
