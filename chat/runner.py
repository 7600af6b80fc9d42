"""Runs chat turns in a bounded thread pool and bridges their events to the event loop.

The pipeline is synchronous (ORM, model client, retrieval), so each turn runs in a pool thread.
The pool is bounded twice: `workers` threads run turns, at most `queue` more wait for one, and a
turn past that is refused at once (`ServerBusy`: SSE 503, WebSocket `server_busy`) rather than
piling up threads and database connections. A reserved slot is held until the turn's thread is
really done, so a client that leaves cannot make room for more threads than the bound. One owner
(a user: browser chats, SSE and MCP `ask` alike) holds at most `per_owner` slots, so one account's
many chats cannot refuse everyone else (`TooManyTurns`: SSE 429, WebSocket `too_many_turns`).

While a turn runs, the bridge
- yields `HEARTBEAT` when nothing happened for `heartbeat` seconds (SSE writes a comment line);
- runs the model calls inside a call budget (docmind.llm.budget): the turn's deadline, a short
  per-call timeout, at most one retry, and the cancel flag, so a silent model cannot hold the
  thread after the client left or the deadline passed;
- ends the stream with an `llm_timeout` error if the turn overruns its deadline anyway;
- closes the thread's database connections when the turn ends (pool threads are reused).
"""
from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator, Callable, Hashable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from django.conf import settings
from django.db import close_old_connections, connections
from django.utils import translation
from django.utils.translation import gettext_lazy

from chat.events import ChatEvent, error_event
from config_admin.conf import ai_config
from docmind import shutdown
from docmind.llm.budget import call_budget
from docmind.telemetry import TraceIdSink, reporting_trace_id

log = logging.getLogger(__name__)

# After the deadline the pipeline gets this long to end with its own error event (which names the
# saved message) before the bridge gives up on it.
DEADLINE_GRACE_SECONDS = 2.0
TIMEOUT_MESSAGE = gettext_lazy("The answer timed out: the model did not finish in time; try again shortly. "
                               "Your question is saved.")
BUSY_MESSAGE = gettext_lazy("The server is busy: the limit of answers at once is reached; try again shortly.")
CRASH_MESSAGE = gettext_lazy("Internal error: the answer could not be completed.")
TOO_MANY_MESSAGE = gettext_lazy("You have too many answers running at once; wait for one to finish and try again.")


DEFAULT_PER_OWNER = 4


class ServerBusy(Exception):
    """Every worker is busy and the waiting line is full."""

    code = "server_busy"
    status = 503


class TooManyTurns(ServerBusy):
    """This owner already holds its share of the runner."""

    code = "too_many_turns"
    status = 429


class _Heartbeat:
    def __repr__(self) -> str:
        return "HEARTBEAT"


HEARTBEAT: Final = _Heartbeat()


@dataclass(frozen=True)
class TurnLimits:
    deadline_seconds: float
    call_timeout_seconds: float


def turn_limits() -> TurnLimits:
    """Read in the turn's thread: the config accessor may query the database."""
    return TurnLimits(deadline_seconds=float(ai_config.get("chat.turn_deadline_seconds")),
                      call_timeout_seconds=float(ai_config.get("llm.interactive_timeout_seconds")))


class TurnSlot:
    """A reservation in the runner; released exactly once, by the turn's thread or by `release()`."""

    def __init__(self, runner: TurnRunner, owner: Hashable | None = None) -> None:
        self._runner = runner
        self._owner = owner
        self._lock = threading.Lock()
        self._released = False
        self._submitted = False

    def release(self) -> None:
        """Give the slot back unless a thread owns it now (that thread gives it back when done)."""
        with self._lock:
            if self._submitted or self._released:
                return
            self._released = True
        self._runner._free(self._owner)

    def claim_for(self, owner: Hashable) -> None:
        """Count this slot (reserved before the caller was known) against `owner`'s share, or TooManyTurns."""
        with self._lock:
            if self._owner is not None or self._released or self._submitted:
                raise RuntimeError("only a fresh slot without an owner can be claimed")
            self._runner._claim(owner)
            self._owner = owner

    def _hand_to_thread(self) -> None:
        with self._lock:
            if self._released:
                raise RuntimeError("this turn slot was already released")
            self._submitted = True

    def _thread_done(self) -> None:
        with self._lock:
            if self._released:
                return
            self._released = True
        self._runner._free(self._owner)


@dataclass(frozen=True)
class _Started:
    deadline: float  # loop time


@dataclass(frozen=True)
class _Crash:
    exc: BaseException


_END = object()


class TurnRunner:
    def __init__(self, *, workers: int, queue: int, per_owner: int | None = None,
                 limits: Callable[[], TurnLimits] = turn_limits) -> None:
        if workers <= 0:
            raise ValueError("workers must be positive")
        if queue < 0:
            raise ValueError("queue must be >= 0")
        if per_owner is not None and per_owner <= 0:
            raise ValueError("per_owner must be positive")
        self.capacity = workers + queue
        # Unless configured: DEFAULT_PER_OWNER, but never more than half the capacity (at least one slot).
        self.per_owner = per_owner if per_owner is not None else max(1, min(DEFAULT_PER_OWNER, self.capacity // 2))
        self._by_owner: dict[Hashable, int] = {}
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="chat-turn")
        self._limits = limits
        self._lock = threading.Lock()
        self._in_flight = 0
        self._cancels: set[threading.Event] = set()  # of the turns handed to a thread and not done yet

    def cancel_all(self) -> None:
        """Cancel every running and queued turn (the server is stopping): each ends as a cancelled answer."""
        with self._lock:
            cancels = list(self._cancels)
        for cancel in cancels:
            cancel.set()

    def in_flight(self) -> int:
        """Turns reserved, queued or running (a cancelled turn counts until its thread is done)."""
        with self._lock:
            return self._in_flight

    def reserve(self, owner: Hashable | None = None) -> TurnSlot:
        """A slot for one turn; `owner` (the user's id) is held to its share, None to the total only."""
        with self._lock:
            if owner is not None and self._by_owner.get(owner, 0) >= self.per_owner:
                raise TooManyTurns(TOO_MANY_MESSAGE)
            if self._in_flight >= self.capacity:
                raise ServerBusy(BUSY_MESSAGE)
            self._in_flight += 1
            if owner is not None:
                self._by_owner[owner] = self._by_owner.get(owner, 0) + 1
        return TurnSlot(self, owner)

    def _claim(self, owner: Hashable) -> None:
        with self._lock:
            if self._by_owner.get(owner, 0) >= self.per_owner:
                raise TooManyTurns(TOO_MANY_MESSAGE)
            self._by_owner[owner] = self._by_owner.get(owner, 0) + 1

    def _free(self, owner: Hashable | None = None) -> None:
        with self._lock:
            self._in_flight -= 1
            if owner is not None:
                left = self._by_owner.get(owner, 1) - 1
                if left > 0:
                    self._by_owner[owner] = left
                else:
                    self._by_owner.pop(owner, None)

    async def stream(self, slot: TurnSlot, produce: Callable[[], Iterator[ChatEvent]], cancel: threading.Event,
                     *, heartbeat: float | None = None,
                     language: str | None = None) -> AsyncIterator[ChatEvent | _Heartbeat]:
        """Run `produce` in the pool and yield its events here; leaving the loop early sets `cancel`.

        `language` is the client's (its page's) language: pool threads do not inherit the caller's
        activated language, so the turn's messages are produced with it activated explicitly.
        """
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[object] = asyncio.Queue()

        def put(item: object) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the loop is gone: nobody listens any more
                cancel.set()

        trace = TraceIdSink()  # the turn reports its trace id here, for the errors this side sends

        def work() -> None:
            try:
                close_old_connections()
                limits = self._limits()
                put(_Started(loop.time() + limits.deadline_seconds))
                with (translation.override(language) if language else nullcontext(), reporting_trace_id(trace),
                      call_budget(seconds=limits.deadline_seconds, cancel=cancel, max_retries=1,
                                  call_timeout=limits.call_timeout_seconds)):
                    for event in produce():
                        put(event)
            except BaseException as exc:  # noqa: BLE001 - reported to the client as an error event
                log.exception("chat worker crashed")
                put(_Crash(exc))
            finally:
                # Pool threads are reused: the turn's connections must not outlive it.
                connections.close_all()
                with self._lock:
                    self._cancels.discard(cancel)
                slot._thread_done()
                put(_END)

        slot._hand_to_thread()
        with self._lock:
            self._cancels.add(cancel)
        try:
            self._executor.submit(work)
        except RuntimeError:  # the executor is shut down (process exiting)
            with self._lock:
                self._cancels.discard(cancel)
            slot._thread_done()
            raise
        deadline: float | None = None
        try:
            while True:
                wait = heartbeat
                if deadline is not None:
                    left = deadline + DEADLINE_GRACE_SECONDS - loop.time()
                    if left <= 0:
                        log.warning("chat turn overran its deadline; ending the stream")
                        yield error_event("llm_timeout", _in(language, TIMEOUT_MESSAGE), **_trace(trace))
                        return
                    wait = left if wait is None else min(wait, left)
                try:
                    item = await asyncio.wait_for(queue.get(), timeout=wait)
                except TimeoutError:
                    if heartbeat is not None:
                        yield HEARTBEAT
                    continue
                if item is _END:
                    return
                if isinstance(item, _Started):
                    deadline = item.deadline
                    continue
                if isinstance(item, _Crash):
                    yield error_event("internal", _in(language, CRASH_MESSAGE), **_trace(trace))
                    return
                assert isinstance(item, ChatEvent)
                yield item
        finally:
            cancel.set()


def _trace(sink: TraceIdSink) -> dict[str, str]:
    return {"trace_id": sink.value} if sink.value else {}


def _in(language: str | None, message: Any) -> str:
    if not language:
        return str(message)
    with translation.override(language):
        return str(message)


@lru_cache(maxsize=1)
def get_turn_runner() -> TurnRunner:
    runner = TurnRunner(workers=settings.CHAT_TURN_WORKERS, queue=settings.CHAT_TURN_QUEUE,
                        per_owner=settings.CHAT_TURNS_PER_USER)
    shutdown.register(runner.cancel_all)  # a stopping server cancels its turns instead of waiting for them
    return runner
