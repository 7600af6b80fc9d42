"""Foreground work first: background threads of a server process give way while a question is being answered.

A server process holds one interpreter lock. The ingestion worker's threads (the conveyor, the knowledge map)
run Python between their native calls, and every time a question's own code gives the lock up (a database read,
a hand-off between threads) it has to win it back from them: on two cores a retrieval's p95 took two to three
times as long while documents were being ingested, whatever the embedder's priority. So retrieval marks itself
(`foreground`), and background loops call `give_way` between their steps: while a question is being answered,
and for a moment after (`LINGER_SECONDS`: the next stage of the same question usually follows at once), they
wait, for at most `max_wait` seconds, so that a steady stream of questions slows ingestion but never stops it.
A step already running is not interrupted; steps are kept short instead.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

# A background step waits at most this long for the questions in flight (a retrieval takes tens of ms).
MAX_WAIT_SECONDS = 0.25
# How long after the last question's stage ended background steps still wait: one question's stages (hybrid
# search, then finishing, then the answer) follow each other within milliseconds.
LINGER_SECONDS = 0.05

_changed = threading.Condition()
_active = 0
_ended_at = float("-inf")


@contextmanager
def foreground() -> Iterator[None]:
    """Mark the calling code as answering a question while it runs (nesting and threads add up)."""
    global _active, _ended_at
    with _changed:
        _active += 1
    try:
        yield
    finally:
        with _changed:
            _active -= 1
            if not _active:
                _ended_at = time.monotonic()
                _changed.notify_all()


def busy() -> bool:
    return _active > 0


def wait_left() -> float:
    """How long background work should still wait for the questions in flight before looking again (0: go on),
    without waiting: at most MAX_WAIT_SECONDS while one is in flight, else what is left of LINGER_SECONDS."""
    if _active:
        return MAX_WAIT_SECONDS
    return max(0.0, _ended_at + LINGER_SECONDS - time.monotonic())


def give_way(max_wait: float = MAX_WAIT_SECONDS) -> float:
    """Wait while a question is being answered (and LINGER_SECONDS after), up to `max_wait` seconds; returns
    the seconds waited."""
    start = time.monotonic()
    if not wait_left():
        return 0.0
    deadline = start + max_wait
    with _changed:  # woken as soon as the last question in flight ends
        while (left := min(wait_left(), deadline - time.monotonic())) > 0:
            _changed.wait(left)
    return time.monotonic() - start
