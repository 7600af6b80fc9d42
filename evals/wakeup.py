"""The signal that an evaluation run is queued: services raise it after the commit, so this process's worker starts
the run at once; the worker sleeps on it between its looks at the queue."""
from __future__ import annotations

from docmind.wakeup import WakeSignal

_signal = WakeSignal()
wake_worker = _signal.wake
wait_for_work = _signal.wait
