"""Gathering evidence: how the agentic hook reports a loop that stopped; when the one-shot search looks in the other
language."""
from __future__ import annotations

import logging
import threading
from types import SimpleNamespace

import pytest

from chat.agentic import factory
from chat.agentic.types import AgenticCancelled
from chat.pipeline import gathering
from chat.pipeline.interrupt import StageGuard
from chat.pipeline.turn import TurnCancelled
from kb.retrieval.params import RetrievalParams
from kb.retrieval.types import Evidence, Grade, GradeResult, ScoredChunk
from memory.types import MemoryParams


class _StoppedLoop:
    def run(self, **kwargs):
        raise AgenticCancelled("client left during the agentic loop")


def test_a_cancelled_agentic_loop_logs_no_traceback_and_leaves_the_turn_line_to_the_pipeline(monkeypatch, caplog):
    monkeypatch.setattr(factory, "build_orchestrator", lambda **kwargs: _StoppedLoop())
    cancel = threading.Event()
    cancel.set()
    turn = SimpleNamespace(question="对比一下两篇文档", history=[], log={}, user=SimpleNamespace(pk=1))
    guard = StageGuard(cancel)
    with caplog.at_level(logging.DEBUG, logger="chat.pipeline.gathering"):
        with pytest.raises(TurnCancelled):
            stages = SimpleNamespace(snapshot={}, chat_model=None, kb_ids=frozenset(),
                                     retrieval_params=RetrievalParams(), memory=MemoryParams())
            list(gathering.agentic(stages=stages, turn=turn, classification=None,
                                   guard=guard))
        guard.settle()  # the loop's thread reports its own end after the turn has already stopped
    records = [r for r in caplog.records if r.name == "chat.pipeline.gathering"]
    assert len(records) == 1
    assert records[0].levelno == logging.DEBUG and records[0].exc_info is None
    assert "client left" in records[0].getMessage()


class _Retriever:
    """Answers each search with the evidence given for it; records whether it was asked across languages."""

    def __init__(self, first: list[str], across: list[str]) -> None:
        self.texts = {False: first, True: across}
        self.calls: list[bool] = []

    def run(self, *, query, document_ids=None):
        return self._search(False)

    def run_across(self, *, query, document_ids=None):
        return self._search(True) if self.texts[True] else None

    def _search(self, across: bool) -> Evidence:
        self.calls.append(across)
        chunks = tuple(ScoredChunk(chunk_id=str(n), content=text, score=1.0 - n / 10, document_id=n,
                                   document_title="", domain="") for n, text in enumerate(self.texts[across]))
        grade = GradeResult(grade=Grade.HIGH, rerank_top1=0.9, lex_coverage=1.0, kb_entity_weak=False,
                            web_compensation_needed=False, reason="")
        return Evidence(chunks=chunks, grade=grade, trace=("searched",))


def _one_shot(question: str, retriever: _Retriever) -> Evidence:
    turn = SimpleNamespace(question=question, document_id=None)
    return gathering.one_shot(SimpleNamespace(retriever=retriever), turn, SimpleNamespace(rewritten=""))


def test_evidence_in_the_questions_language_without_the_asked_value_is_searched_again_across_languages():
    retriever = _Retriever(["试用期员工不参加当期考核。"], ["The probation period is three months."])
    evidence = _one_shot("试用期多长？", retriever)
    assert retriever.calls == [False, True]
    assert evidence.chunks[0].content == "The probation period is three months."
    assert "searched the other language too" in evidence.trace[-1]


def test_evidence_that_never_says_a_word_the_question_names_is_searched_again_across_languages():
    retriever = _Retriever(["年假须提前三天申请。"], ["Annual leave is 10 days."])
    _one_shot("年假可以累积吗？", retriever)
    assert retriever.calls == [False, True]


def test_evidence_that_states_the_asked_value_is_searched_once():
    retriever = _Retriever(["试用期为三个月。"], [])
    evidence = _one_shot("试用期多长？", retriever)
    assert retriever.calls == [False]
    assert evidence.chunks[0].content == "试用期为三个月。"


def test_evidence_already_in_the_other_language_is_searched_once():
    retriever = _Retriever(["Probationers are not appraised."], ["试用期为三个月。"])
    _one_shot("试用期多长？", retriever)
    assert retriever.calls == [False]


def test_a_base_without_the_other_language_keeps_the_first_evidence():
    retriever = _Retriever(["试用期员工不参加当期考核。"], [])
    evidence = _one_shot("试用期多长？", retriever)
    assert evidence.chunks[0].content == "试用期员工不参加当期考核。"
    assert evidence.trace == ("searched",)


def test_the_other_languages_evidence_is_kept_only_when_it_states_what_was_unsaid():
    retriever = _Retriever(["试用期员工不参加当期考核。"], ["Probationers meet their mentor every week."])
    evidence = _one_shot("试用期多长？", retriever)
    assert retriever.calls == [False, True]
    assert evidence.chunks[0].content == "试用期员工不参加当期考核。"
    assert "it did not state" in evidence.trace[-1]
