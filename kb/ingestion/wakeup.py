"""The signal that new work is queued: services raise it after a commit (an upload, a retry), so the worker starts
at once instead of at its next poll; the worker sleeps on it between polls."""
from __future__ import annotations

from docmind.wakeup import WakeSignal

_signal = WakeSignal()
wake_worker = _signal.wake
wait_for_work = _signal.wait
