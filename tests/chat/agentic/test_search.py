"""KbDocSearch: the loop's searchDocs asks the other language too when its own language names the topic only."""
from __future__ import annotations

from chat.agentic.search import OTHER_LANGUAGE_CHUNKS, KbDocSearch
from kb.retrieval.hybrid import HybridResult
from kb.retrieval.types import ScoredChunk


def _chunk(chunk_id: str, text: str) -> ScoredChunk:
    return ScoredChunk(chunk_id=chunk_id, content=text, score=1.0, document_title="", domain="")


OWN = [_chunk("zh1", "试用期员工不参加当期考核。"), _chunk("zh2", "考核结果分为五级。"),
       _chunk("zh3", "考核每半年一次。")]


class _Hybrid:
    """Returns `own` for a search, `own` and `other` fused for one across languages; counts the searches."""

    def __init__(self, own: list[ScoredChunk], other: list[ScoredChunk]) -> None:
        self.own, self.other, self.calls = own, other, []

    def run(self, *, query, domains=None, across=False, **_):
        self.calls.append(across)
        chunks = [*self.own, *self.other] if across else self.own
        return HybridResult(chunks=tuple(chunks), vector_count=len(chunks), lexical_count=0, query_vector=None)


def _search(hybrid: _Hybrid) -> KbDocSearch:
    return KbDocSearch(hybrid=hybrid, searcher=None)


def test_other_language_chunks_stating_what_the_own_language_leaves_unsaid_take_the_last_places():
    probation = _chunk("en1", "The probation period is six months.")
    hybrid = _Hybrid(OWN, [probation, _chunk("en2", "New joiners meet their mentor in week one.")])
    found = _search(hybrid).hybrid("试用期多长？", k=3)
    assert hybrid.calls == [False, True]
    kept = [c.chunk_id for c in OWN][:3 - OTHER_LANGUAGE_CHUNKS]
    assert [c.chunk_id for c in found] == [*kept, *["en1", "en2"][:OTHER_LANGUAGE_CHUNKS]]
    assert probation in found


def test_other_language_chunks_that_do_not_state_it_leave_the_results_as_found():
    hybrid = _Hybrid(OWN, [_chunk("en1", "Probationers meet their mentor in week one.")])
    found = _search(hybrid).hybrid("试用期多长？", k=3)
    assert hybrid.calls == [False, True]
    assert [c.chunk_id for c in found] == ["zh1", "zh2", "zh3"]


def test_results_that_state_what_is_asked_search_once():
    hybrid = _Hybrid([_chunk("zh1", "试用期为三个月。")], [_chunk("en1", "The probation period is six months.")])
    found = _search(hybrid).hybrid("试用期多长？", k=3)
    assert hybrid.calls == [False]
    assert [c.chunk_id for c in found] == ["zh1"]
