"""`StageGuard`: runs a turn's slow stages on helper threads so that Stop ends the turn at once.

Retrieval, reranking and the agentic loop are synchronous calls that can take seconds and do not
look at the cancel flag themselves. The turn's thread waits for them in short polls instead, and
on a cancel it stops waiting: the `cancelled` event reaches the client within one poll, while the
abandoned stage finishes in the background with its result thrown away. `settle()` then waits
for those stragglers before the turn's thread (and so its runner slot) is given back, so a user
pressing Stop repeatedly cannot make more work run at once than the runner allows.
"""
from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from django.db import connections

from chat.pipeline.turn import TurnCancelled
from docmind.telemetry import in_context

POLL_SECONDS = 0.05
# How long a cancelled turn's thread waits for its abandoned stages before letting them go.
SETTLE_SECONDS = 30.0
_END = object()


class StageGuard:
    def __init__(self, cancel: threading.Event) -> None:
        self.cancel = cancel
        self._threads: list[threading.Thread] = []

    def check(self) -> None:
        if self.cancel.is_set():
            raise TurnCancelled

    def call[T](self, fn: Callable[[], T], *, name: str) -> T:
        """`fn()` on a helper thread; raises TurnCancelled as soon as the cancel flag is seen."""
        self.check()
        outcome: dict[str, Any] = {}
        done = threading.Event()

        def work() -> None:
            try:
                outcome["value"] = fn()
            except BaseException as exc:  # noqa: BLE001 - re-raised on the turn's thread
                outcome["error"] = exc
            finally:
                connections.close_all()  # this helper thread's own connections die with it
                done.set()

        self.start(work, name=name)
        while not done.wait(POLL_SECONDS):
            self.check()
        if "error" in outcome:
            raise outcome["error"]
        return outcome["value"]

    def iterate[T](self, produce: Callable[[], Iterable[T]], *, name: str) -> Iterator[T]:
        """The items of `produce()`, pulled on a helper thread; TurnCancelled between and while waiting for items."""
        self.check()
        items: queue.Queue[Any] = queue.Queue()

        def work() -> None:
            try:
                for item in produce():
                    if self.cancel.is_set():
                        return  # stop pulling: closing the stream ends the model request
                    items.put((True, item))
            except BaseException as exc:  # noqa: BLE001 - re-raised on the turn's thread
                items.put((False, exc))
            finally:
                connections.close_all()
                items.put(_END)

        self.start(work, name=name)
        while True:
            self.check()
            try:
                entry = items.get(timeout=POLL_SECONDS)
            except queue.Empty:
                continue
            if entry is _END:
                return
            ok, value = entry
            if not ok:
                raise value
            yield value

    def start(self, work: Callable[[], None], *, name: str) -> threading.Thread:
        """A helper thread in the turn's context (its spans and model budget), waited for by `settle()`."""
        thread = threading.Thread(target=in_context(work), name=f"chat-{name}", daemon=True)
        self._threads.append(thread)
        thread.start()
        return thread

    def settle(self, timeout: float = SETTLE_SECONDS) -> None:
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
