"""Bm25Index: Lucene/Milvus BM25 scores over live rows, filters, incremental writes, segment merges."""
import math
import threading
from collections import Counter

import pytest

from docmind.indexes import bm25
from docmind.indexes.bm25 import Bm25Index
from docmind.indexes.lexical import ANALYZER_PARAMS, analyze, term_ids

TEXTS = {
    1: "大熊猫主要吃竹子，生活在四川的山林里。",
    2: "差旅报销需要在出差结束后三十天内提交发票。",
    3: "Rust is a systems programming language with a borrow checker.",
    4: "熊猫宝宝在成都出生，竹子是熊猫的主食。",
    5: "发票丢失时报销需要部门经理审批。",
}


def _reference(texts: dict[int, str], query: str, k1=bm25.K1, b=bm25.B) -> dict[int, float]:
    docs = {pk: Counter(analyze(t)) for pk, t in texts.items()}
    n = len(docs)
    avg = sum(sum(c.values()) for c in docs.values()) / n
    scores: dict[int, float] = {}
    for term, weight in Counter(analyze(query)).items():
        df = sum(1 for c in docs.values() if term in c)
        if not df:
            continue
        idf = math.log((n - df + 0.5) / (df + 0.5) + 1)
        for pk, c in docs.items():
            tf = c.get(term, 0)
            if tf:
                length = sum(c.values())
                scores[pk] = scores.get(pk, 0) + weight * idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avg))
    return scores


def _index(texts: dict[int, str], domains=None) -> Bm25Index:
    ids = list(texts)
    domains = domains or ["d"] * len(ids)
    counts = [Counter(term_ids(texts[i])) for i in ids]
    return Bm25Index(terms=term_ids, load=lambda: iter([(ids, counts, ids, domains)]))



@pytest.mark.parametrize("text", [*TEXTS.values(), "熊猫 熊猫 PANDA panda", "的了在"])
def test_term_ids_are_the_ids_milvus_lite_stores_for_the_text_also_when_cached(text):
    # heavy: milvus_lite's analyzer loads on first use
    from milvus_lite.analyzer.factory import create_analyzer
    from milvus_lite.analyzer.hash import term_to_id

    # Milvus Lite's own tokens and hash, not its `analyze`, which a Lite store routes through `term_ids`.
    stored = [term_to_id(token) for token in create_analyzer(ANALYZER_PARAMS).tokenize(text)]
    assert term_ids(text) == stored
    assert term_ids(text) == stored  # every token's id now comes from the cache

@pytest.mark.parametrize("query", ["熊猫吃竹子", "报销 发票", "borrow checker", "熊猫 熊猫 报销", "没有的词"])
def test_scores_match_the_bm25_formula(query):
    expected = _reference(TEXTS, query)
    hits = _index(TEXTS).search(query, k=10)
    assert dict(hits) == pytest.approx(expected)
    assert [s for _, s in hits] == pytest.approx(sorted(expected.values(), reverse=True))


def test_writes_after_load_update_statistics_like_a_fresh_build(monkeypatch):
    monkeypatch.setattr(bm25, "MAX_SEGMENTS", 2)  # force merges
    index = _index({1: TEXTS[1]})
    index.search("熊猫", k=1)
    for pk in (2, 3, 4, 5):
        index.add(ids=[pk], texts=[TEXTS[pk]], document_ids=[pk], domains=["d"])
    index.add(ids=[1], texts=["报销发票报销"], document_ids=[1], domains=["d"])  # replaces chunk 1
    texts = {**TEXTS, 1: "报销发票报销"}
    assert dict(index.search("报销 熊猫", k=10)) == pytest.approx(_reference(texts, "报销 熊猫"))
    index.delete_documents([4])
    index.delete_ids([1])
    rest = {pk: t for pk, t in texts.items() if pk not in (1, 4)}
    assert dict(index.search("报销 熊猫", k=10)) == pytest.approx(_reference(rest, "报销 熊猫"))
    index.reset()
    assert index.search("报销", k=10) == []


def test_filters_restrict_hits_but_not_statistics():
    index = _index(TEXTS, domains=["a", "b", "b", "a", "b"])
    everything = dict(index.search("熊猫 报销", k=10))
    assert dict(index.search("熊猫 报销", k=10, domains=["a"])) == {pk: everything[pk] for pk in (1, 4)}
    assert dict(index.search("熊猫 报销", k=10, document_ids=[2, 3])) == {2: everything[2]}
    assert index.search("熊猫", k=10, domains=["nope"]) == []


def test_top_k_keeps_the_best():
    hits = _index(TEXTS).search("熊猫 报销 发票", k=2)
    assert len(hits) == 2 and hits[0][1] >= hits[1][1]


def test_searches_run_while_a_writer_adds_and_deletes(monkeypatch):
    monkeypatch.setattr(bm25, "MAX_SEGMENTS", 4)
    index = _index(TEXTS)
    index.search("熊猫", k=1)
    errors: list[BaseException] = []
    done = threading.Event()

    def writer():
        try:
            for step in range(100):
                pk = 1000 + step
                index.add(ids=[pk], texts=[f"报销 熊猫 第{step}条"], document_ids=[pk], domains=["w"])
                if step % 2:
                    index.delete_ids([pk - 1])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            done.set()

    def reader():
        try:
            while not done.is_set():
                assert {pk for pk, _ in index.search("borrow checker", k=3)} == {3}
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=writer), threading.Thread(target=reader), threading.Thread(target=reader)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    live = {pk for pk, _ in index.search("报销 熊猫", k=1000, domains=["w"])}
    assert live == {1000 + s for s in range(100) if s % 2}  # each odd step deleted the even one before it
