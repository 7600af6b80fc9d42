"""Pipeline steps: how the agentic hook reports a loop that stopped."""
from __future__ import annotations

import logging
import threading
from types import SimpleNamespace

import pytest

from chat.agentic import factory
from chat.agentic.types import AgenticCancelled
from chat.pipeline import steps
from chat.pipeline.turn import TurnCancelled


class _StoppedLoop:
    def run(self, **kwargs):
        raise AgenticCancelled("client left during the agentic loop")


def test_a_cancelled_agentic_loop_logs_one_line_without_a_traceback(monkeypatch, caplog):
    monkeypatch.setattr(factory, "build_orchestrator", lambda **kwargs: _StoppedLoop())
    cancel = threading.Event()
    cancel.set()
    turn = SimpleNamespace(question="对比一下两篇文档", history=[], log={}, user=SimpleNamespace(pk=1))
    with caplog.at_level(logging.INFO, logger="chat.pipeline.steps"), pytest.raises(TurnCancelled):
        list(steps.agentic(stages=SimpleNamespace(snapshot={}, chat_model=None), turn=turn, classification=None,
                           cancel=cancel))
    records = [r for r in caplog.records if r.name == "chat.pipeline.steps"]
    assert len(records) == 1
    assert records[0].levelno == logging.INFO and records[0].exc_info is None
    assert "client left" in records[0].getMessage()
