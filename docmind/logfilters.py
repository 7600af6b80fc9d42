"""Logging filters: one line per outage instead of one per request, and a refusal without its traceback."""
from __future__ import annotations

import logging
import threading
import time


class OncePerWindow(logging.Filter):
    """Pass a logger's first record, then drop its records for `seconds`; the next one says how many were dropped."""

    def __init__(self, seconds: float = 300.0) -> None:
        super().__init__()
        if seconds <= 0:
            raise ValueError("seconds must be positive")
        self._seconds = seconds
        self._lock = threading.Lock()
        self._last: dict[str, float] = {}
        self._dropped: dict[str, int] = {}

    def reset(self) -> None:
        with self._lock:
            self._last.clear()
            self._dropped.clear()

    def filter(self, record: logging.LogRecord) -> bool:
        now = time.monotonic()
        with self._lock:
            last = self._last.get(record.name)
            if last is not None and now - last < self._seconds:
                self._dropped[record.name] = self._dropped.get(record.name, 0) + 1
                return False
            self._last[record.name] = now
            dropped = self._dropped.pop(record.name, 0)
        if dropped:
            record.msg = f"{record.msg} ({dropped} similar records dropped in the last window)"
        return True


class RefusalWithoutTraceback(logging.Filter):
    """A refused request (403) is routine: Django's warning line for it stays, the traceback of the PermissionDenied
    a view raised to refuse it does not."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "status_code", None) == 403:
            record.exc_info = None
            record.exc_text = None
        return True
