"""The signal that new work is queued: services raise it after a commit, the worker sleeps on it between polls."""
from __future__ import annotations

import threading

_wake = threading.Event()


def wake_worker() -> None:
    """Called after an upload commits so the worker starts at once instead of at its next poll."""
    _wake.set()


def wait_for_work(timeout: float) -> None:
    """Sleep until woken or `timeout` seconds pass, then be ready for the next signal."""
    _wake.wait(timeout)
    _wake.clear()
