"""A worker thread's wake-up: whoever queues work raises it after the commit; the worker sleeps on it between looks."""
from __future__ import annotations

import threading


class WakeSignal:
    """One per queue. A signal raised while the worker is busy is kept, so its next sleep ends at once."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def wake(self) -> None:
        self._event.set()

    def wait(self, timeout: float) -> None:
        """Sleep until woken or `timeout` seconds pass, then be ready for the next signal."""
        self._event.wait(timeout)
        self._event.clear()
