"""`ChatFirstGate`: an evaluation run waits while users' chat turns are running in this process."""
from __future__ import annotations

import time
from collections.abc import Callable


class ChatFirstGate:
    """Called between the steps of an evaluation's questions: while any chat turn is reserved, queued or running
    it waits, polling every `poll` seconds, for at most `max_wait` seconds at a time (so a server that is never
    idle still finishes its runs, one step per `max_wait`), or until `stopped()` says the run is over."""

    def __init__(self, *, busy: Callable[[], int], max_wait: float, poll: float = 0.05,
                 stopped: Callable[[], bool] = lambda: False, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if max_wait < 0 or poll <= 0:
            raise ValueError("max_wait must be >= 0 and poll > 0")
        self._busy, self._max_wait, self._poll = busy, max_wait, poll
        self._stopped, self._sleep, self._clock = stopped, sleep, clock
        self.waited = 0.0

    def __call__(self) -> None:
        start = self._clock()
        while self._busy() > 0 and not self._stopped():
            if self._clock() - start >= self._max_wait:
                break
            self._sleep(self._poll)
        self.waited += self._clock() - start
