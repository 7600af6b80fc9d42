"""`ChatFirstGate`: an evaluation waits while chat turns run, for a bounded time."""
from __future__ import annotations

import pytest

from evals.gate import ChatFirstGate


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_it_passes_at_once_when_no_chat_turn_runs():
    clock = Clock()
    ChatFirstGate(busy=lambda: 0, max_wait=30, sleep=clock.sleep, clock=clock)()
    assert clock.now == 0


def test_it_waits_until_the_chat_turns_are_done():
    clock = Clock()
    gate = ChatFirstGate(busy=lambda: 1 if clock.now < 2 else 0, max_wait=30, poll=0.5, sleep=clock.sleep,
                         clock=clock)
    gate()
    assert clock.now == 2 and gate.waited == 2


def test_it_waits_at_most_max_wait_when_chat_never_stops():
    clock = Clock()
    ChatFirstGate(busy=lambda: 3, max_wait=5, poll=1, sleep=clock.sleep, clock=clock)()
    assert clock.now == 5


def test_a_stopped_run_does_not_wait():
    clock = Clock()
    ChatFirstGate(busy=lambda: 3, max_wait=5, stopped=lambda: True, sleep=clock.sleep, clock=clock)()
    assert clock.now == 0


def test_it_rejects_a_non_positive_poll():
    with pytest.raises(ValueError):
        ChatFirstGate(busy=lambda: 0, max_wait=1, poll=0)
