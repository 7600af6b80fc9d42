"""The signal that an evaluation run is queued: services raise it after the commit, the worker sleeps on it."""
from __future__ import annotations

import threading

_wake = threading.Event()


def wake_worker() -> None:
    """Called once a run is queued, so that this process's worker starts it at once."""
    _wake.set()


def wait_for_work(timeout: float) -> None:
    """Sleep until woken or `timeout` seconds pass, then be ready for the next signal."""
    _wake.wait(timeout)
    _wake.clear()
