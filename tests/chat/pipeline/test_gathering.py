"""Gathering evidence: how the agentic hook reports a loop that stopped."""
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
