"""RetrievedDocTracker: per-turn dedup, cleared on exit, bounded, thread-safe."""
from __future__ import annotations

import threading

import pytest

from chat.agentic.tracker import RetrievedDocTracker
from kb.retrieval.types import ScoredChunk, Source


def _chunk(cid: str, doc: int | None, url: str | None = None) -> ScoredChunk:
    source = Source.KB if doc is not None else Source.WEB
    return ScoredChunk(chunk_id=cid, content=cid, score=1.0, source=source, document_id=doc, url=url)


def test_a_document_is_returned_once_per_session():
    tracker = RetrievedDocTracker()
    with tracker.session() as sid:
        first = tracker.filter_new(sid, [_chunk("1", 10), _chunk("2", 10), _chunk("3", 11)])
        second = tracker.filter_new(sid, [_chunk("4", 10), _chunk("5", 12), _chunk("w", None, "https://x")])
        third = tracker.filter_new(sid, [_chunk("w2", None, "https://x")])
    assert [c.chunk_id for c in first] == ["1", "2", "3"]
    assert [c.chunk_id for c in second] == ["5", "w"]
    assert third == []


def test_the_next_turn_gets_the_same_documents_again():
    tracker = RetrievedDocTracker()
    with tracker.session() as sid:
        tracker.filter_new(sid, [_chunk("1", 10)])
    with tracker.session() as sid2:
        assert [c.chunk_id for c in tracker.filter_new(sid2, [_chunk("1", 10)])] == ["1"]
    assert sid != sid2 and tracker.session_count() == 0


def test_the_session_is_cleared_on_error():
    tracker = RetrievedDocTracker()
    with pytest.raises(RuntimeError), tracker.session("turn-1") as sid:
        tracker.filter_new(sid, [_chunk("1", 10)])
        raise RuntimeError("tool failed")
    assert tracker.session_count() == 0 and not tracker.is_already_retrieved("turn-1", "doc:10")


def test_it_evicts_the_least_recently_used_session():
    tracker = RetrievedDocTracker(max_sessions=2, max_docs_per_session=2)
    tracker.mark_retrieved("a", ["doc:1"])
    tracker.mark_retrieved("b", ["doc:1"])
    tracker.mark_retrieved("a", ["doc:2"])  # a is now the most recent
    tracker.mark_retrieved("c", ["doc:1"])
    assert tracker.session_count() == 2
    assert tracker.is_already_retrieved("a", "doc:2") and not tracker.is_already_retrieved("b", "doc:1")
    tracker.mark_retrieved("a", ["doc:3"])
    assert not tracker.is_already_retrieved("a", "doc:1")  # per-session cap keeps the newest


def test_concurrent_turns_do_not_see_each_other():
    tracker = RetrievedDocTracker()
    results: dict[int, int] = {}

    def turn(n: int) -> None:
        with tracker.session() as sid:
            total = 0
            for _ in range(50):
                total += len(tracker.filter_new(sid, [_chunk(str(d), d) for d in range(20)]))
            results[n] = total

    threads = [threading.Thread(target=turn, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {n: 20 for n in range(8)} and tracker.session_count() == 0
