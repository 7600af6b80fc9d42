"""Per-turn limits on model calls: a deadline, a retry cap and a cancel flag, honoured mid-request.

A chat turn runs its model calls inside ``call_budget(...)``; the LLM client then bounds each
call's timeout by the time left, retries at most ``max_retries`` times, and its socket reads
wake up every ``POLL_SECONDS`` to notice a cancel (the client left) or the deadline, so a model
that accepts and never answers cannot hold the turn's thread past either. Calls made outside a
budget (ingestion, memory extraction) keep the client's own timeout and retries.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

# How often a blocked socket read looks at the cancel flag and the deadline.
POLL_SECONDS = 0.25


@dataclass(frozen=True)
class CallBudget:
    deadline: float  # time.monotonic() value
    cancel: threading.Event | None = None
    max_retries: int = 1
    call_timeout: float | None = None  # one call (or one wait between streamed deltas)

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    @property
    def cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()

    @property
    def expired(self) -> bool:
        return self.remaining() <= 0


_current: ContextVar[CallBudget | None] = ContextVar("docmind_llm_call_budget", default=None)


@contextmanager
def call_budget(*, seconds: float, cancel: threading.Event | None = None, max_retries: int = 1,
                call_timeout: float | None = None) -> Iterator[CallBudget]:
    if seconds <= 0:
        raise ValueError("seconds must be positive")
    if max_retries < 0:
        raise ValueError("max_retries must be >= 0")
    if call_timeout is not None and call_timeout <= 0:
        raise ValueError("call_timeout must be positive")
    budget = CallBudget(deadline=time.monotonic() + seconds, cancel=cancel, max_retries=max_retries,
                        call_timeout=call_timeout)
    token = _current.set(budget)
    try:
        yield budget
    finally:
        _current.reset(token)


def current_budget() -> CallBudget | None:
    return _current.get()
