"""`FairShareExecutor`: one bounded thread pool shared by many owners, none of whom may take it all.

A plain pool is first come, first served: one user whose agentic rounds each ask for several slow
tools (a sandbox run, a web search) fills every thread and queues ahead of everyone else's calls.
Here each owner has at most `per_owner` calls running or waiting in the pool; further calls of that
owner wait in the owner's own line and enter the pool as its earlier calls finish, so another
owner's call is never behind more than `per_owner` calls of any one owner.
"""
from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Hashable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any


class FairShareExecutor:
    def __init__(self, *, max_workers: int, per_owner: int, thread_name_prefix: str = "") -> None:
        if max_workers <= 0 or per_owner <= 0:
            raise ValueError("max_workers and per_owner must be positive")
        self.per_owner = min(per_owner, max_workers)
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix=thread_name_prefix)
        self._lock = threading.Lock()
        self._active: dict[Hashable, int] = {}
        self._waiting: dict[Hashable, deque[tuple[Future[Any], Callable[[], Any]]]] = {}

    def for_owner(self, owner: Hashable | None) -> Executor:
        """An Executor whose calls count against `owner`'s share (None: one shared anonymous owner)."""
        return _OwnerExecutor(self, owner)

    def active(self, owner: Hashable | None) -> int:
        with self._lock:
            return self._active.get(owner, 0)

    def _submit(self, owner: Hashable | None, fn: Callable[[], Any]) -> Future[Any]:
        future: Future[Any] = Future()
        with self._lock:
            if self._active.get(owner, 0) >= self.per_owner:
                self._waiting.setdefault(owner, deque()).append((future, fn))
                return future
            self._active[owner] = self._active.get(owner, 0) + 1
        self._start(owner, future, fn)
        return future

    def _start(self, owner: Hashable | None, future: Future[Any], fn: Callable[[], Any]) -> None:
        def run() -> None:
            try:
                if future.set_running_or_notify_cancel():
                    try:
                        result = fn()
                    except BaseException as exc:  # noqa: BLE001 - handed to the caller through the future
                        future.set_exception(exc)
                    else:
                        future.set_result(result)
            finally:
                self._finished(owner)

        try:
            self._pool.submit(run)
        except RuntimeError as exc:  # the pool is shut down (process exiting)
            self._finished(owner)
            if future.set_running_or_notify_cancel():
                future.set_exception(exc)

    def _finished(self, owner: Hashable | None) -> None:
        with self._lock:
            line = self._waiting.get(owner)
            if line:
                future, fn = line.popleft()
                if not line:
                    del self._waiting[owner]
            else:
                left = self._active.get(owner, 1) - 1
                if left > 0:
                    self._active[owner] = left
                else:
                    self._active.pop(owner, None)
                return
        self._start(owner, future, fn)  # the finished call's slot passes to the owner's next call


class _OwnerExecutor(Executor):
    def __init__(self, shared: FairShareExecutor, owner: Hashable | None) -> None:
        self._shared, self._owner = shared, owner

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:  # type: ignore[override]
        return self._shared._submit(self._owner, lambda: fn(*args, **kwargs))
