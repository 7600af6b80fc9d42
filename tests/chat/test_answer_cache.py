"""Semantic answer cache: similarity threshold, per-user isolation, knowledge-base version."""
from __future__ import annotations

from dataclasses import asdict

import numpy as np
import pytest
from django.core.cache import caches

from chat.answer_cache import CachedAnswer, SemanticAnswerCache

# The cache is Redis in the MariaDB + Redis run: these run there too (tests/scope.py).
pytestmark = pytest.mark.services


class BagOfCharsEmbedder:
    """Deterministic query vectors: near-identical texts get near-identical vectors."""

    def embed_query(self, text: str) -> np.ndarray:
        vector = np.zeros(64, dtype=np.float32)
        for ch in text:
            vector[ord(ch) % 64] += 1.0
        return vector / max(float(np.linalg.norm(vector)), 1e-9)


@pytest.fixture
def backend():
    cache = caches["default"]
    cache.clear()
    yield cache
    cache.clear()


def _cache(backend, **kw) -> SemanticAnswerCache:
    return SemanticAnswerCache(embedder=BagOfCharsEmbedder(), backend=backend, enabled=kw.pop("enabled", True),
                               threshold=kw.pop("threshold", 0.97), **kw)


def _answer(question: str) -> CachedAnswer:
    return CachedAnswer(question=question, answer="答案 [1]", classification={}, chunks=[], grade={}, sources=[],
                        report={"citations": []})


def _remember(cache, *, user_id=1, kb_version=1, question="北京的面积是多少？"):
    probe = cache.lookup(user_id=user_id, kb_version=kb_version, scope="kb", query=question)
    assert probe.hit is None
    cache.store(user_id=user_id, kb_version=kb_version, scope="kb", probe=probe, answer=_answer(question))


def test_it_hits_for_the_same_question(backend):
    cache = _cache(backend)
    _remember(cache)
    probe = cache.lookup(user_id=1, kb_version=1, scope="kb", query="北京的面积是多少？")
    assert probe.hit is not None and probe.hit.answer == "答案 [1]"
    assert probe.similarity == pytest.approx(1.0, abs=1e-5)


def test_it_misses_for_a_different_question(backend):
    cache = _cache(backend)
    _remember(cache)
    assert cache.lookup(user_id=1, kb_version=1, scope="kb", query="上海有多少人口？").hit is None


def test_answers_are_isolated_per_user(backend):
    cache = _cache(backend)
    _remember(cache, user_id=1)
    assert cache.lookup(user_id=2, kb_version=1, scope="kb", query="北京的面积是多少？").hit is None


def test_a_knowledge_base_change_drops_old_answers(backend):
    cache = _cache(backend)
    _remember(cache, kb_version=1)
    assert cache.lookup(user_id=1, kb_version=2, scope="kb", query="北京的面积是多少？").hit is None


def test_a_disabled_cache_never_embeds_or_hits(backend):
    cache = _cache(backend, enabled=False)
    probe = cache.lookup(user_id=1, kb_version=1, scope="kb", query="x")
    assert probe.vector is None and probe.hit is None


def test_it_keeps_only_the_newest_entries(backend):
    cache = _cache(backend, max_entries=2)
    for q in ("aaaa", "bbbb", "cccc"):
        _remember(cache, question=q)
    assert cache.lookup(user_id=1, kb_version=1, scope="kb", query="aaaa").hit is None
    assert cache.lookup(user_id=1, kb_version=1, scope="kb", query="cccc").hit is not None


def test_an_entry_stored_in_the_older_shape_is_never_replayed(backend):
    # Stored before the grade and report keys were snake_case: a replay could not read its grade.
    cache = _cache(backend)
    vector = [float(x) for x in BagOfCharsEmbedder().embed_query("年假有几天？")]
    old = {**asdict(_answer("年假有几天？")), "grade": {"grade": "HIGH", "rerankTop1": 0.9, "lexCoverage": 1.0,
                                                        "kbEntityWeak": False, "webCompensationNeeded": False}}
    backend.set("chat:answer-cache:v1:u1:kb3:kb", [{"vector": vector, "answer": old}])
    _remember(cache, kb_version=3, question="年假有几天？")  # a miss: the older entry is not looked at
    hit = cache.lookup(user_id=1, kb_version=3, scope="kb", query="年假有几天？").hit
    assert hit is not None and hit.grade == {}


@pytest.mark.parametrize("threshold", [0, 1.5])
def test_it_rejects_a_bad_threshold(backend, threshold):
    with pytest.raises(ValueError):
        _cache(backend, threshold=threshold)


class EverythingIsTheSame:
    """An embedder that cannot tell questions apart: only the lexical guard can."""

    def embed_query(self, text: str) -> np.ndarray:
        return np.ones(8, dtype=np.float32) / np.sqrt(8)


@pytest.mark.parametrize(("asked", "new", "hit"), [
    ("1992年4月，罗保铭担任什么职务？", "2017年4月，罗保铭担任什么职务？", False),
    ("什么是放线菌酮？", "在分子生物学中，放线菌酮有什么作用？", False),
    ("北京的面积是多少？", "北京的面积是多少", True),
])
def test_a_hit_also_needs_the_same_numbers_and_wording(backend, asked, new, hit):
    cache = SemanticAnswerCache(embedder=EverythingIsTheSame(), backend=backend, enabled=True, threshold=0.97)
    _remember(cache, question=asked)
    assert (cache.lookup(user_id=1, kb_version=1, scope="kb", query=new).hit is not None) is hit
