"""The chat event protocol (the same over WebSocket and SSE): types, order, encoders, thread bridge.

Order of one turn::

    understanding → routing → (agentic)* → (code_exec)* → retrieval → rerank → grader
                  → start → (token)* → done

Non-knowledge scopes (greeting, identity/help, KB meta, memory, out of scope) skip retrieval:
``understanding → routing → start → (token)* → done``. A semantic-cache hit streams the full
sequence with the cached evidence. ``error`` ends a stream that cannot finish (bad input,
model timeout/500, cancellation); it carries ``code`` and ``message``, and
``conversation_id`` / ``message_id`` once the question was saved.
"""
from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db import close_old_connections, connections

log = logging.getLogger(__name__)

UNDERSTANDING = "understanding"
ROUTING = "routing"
AGENTIC = "agentic"
CODE_EXEC = "code_exec"
RETRIEVAL = "retrieval"
RERANK = "rerank"
GRADER = "grader"
START = "start"
TOKEN = "token"
DONE = "done"
ERROR = "error"

EVENT_TYPES = (UNDERSTANDING, ROUTING, AGENTIC, CODE_EXEC, RETRIEVAL, RERANK, GRADER, START, TOKEN, DONE, ERROR)
# Position in the protocol; repeatable events may follow themselves.
_RANK = {UNDERSTANDING: 0, ROUTING: 1, AGENTIC: 2, CODE_EXEC: 3, RETRIEVAL: 4, RERANK: 5, GRADER: 6, START: 7,
         TOKEN: 8, DONE: 9}
_REPEATABLE = {AGENTIC, CODE_EXEC, TOKEN}
# Optional steps: agentic/code_exec may be absent; the retrieval trio is absent for non-knowledge scopes.
_SKIPPABLE = {AGENTIC, CODE_EXEC, RETRIEVAL, RERANK, GRADER, TOKEN}


@dataclass(frozen=True)
class ChatEvent:
    type: str
    data: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.type not in EVENT_TYPES:
            raise ValueError(f"unknown chat event type {self.type!r}")

    def to_ws(self) -> dict[str, Any]:
        return {"type": self.type, "data": self.data}

    def to_sse(self) -> bytes:
        payload = json.dumps(self.data, ensure_ascii=False, separators=(",", ":"))
        return f"event: {self.type}\ndata: {payload}\n\n".encode()


def error_event(code: str, message: str, **extra: Any) -> ChatEvent:
    return ChatEvent(ERROR, {"code": code, "message": message, **extra})


def order_problem(types: Iterable[str]) -> str | None:
    """Why a sequence of event types breaks the protocol, or None when it follows it."""
    seen: list[str] = list(types)
    if not seen:
        return "empty stream"
    if seen[-1] == ERROR:
        seen = seen[:-1]
        if ERROR in seen:
            return "error before the end"
        if DONE in seen:
            return "error after done"
        expected_end = None
    else:
        expected_end = DONE
    if ERROR in seen:
        return "error before the end"
    previous = -1
    for i, kind in enumerate(seen):
        rank = _RANK[kind]
        if rank < previous or (rank == previous and kind not in _REPEATABLE):
            return f"{kind} at position {i} is out of order"
        for missing, missing_rank in _RANK.items():
            if previous < missing_rank < rank and missing not in _SKIPPABLE:
                return f"{missing} missing before {kind}"
        previous = rank
    if expected_end is not None and seen[-1] != expected_end:
        return "stream does not end with done or error"
    has_retrieval = {RETRIEVAL, RERANK, GRADER} & set(seen)
    if has_retrieval and len(has_retrieval) != 3:
        return "retrieval, rerank and grader come together"
    return None


_END = object()


@dataclass(frozen=True)
class _Crash:
    exc: BaseException


async def events_from_thread(produce: Callable[[], Iterator[ChatEvent]],
                             cancel: threading.Event) -> AsyncIterator[ChatEvent]:
    """Run a sync event generator in its own thread and yield its events here.

    The pipeline is synchronous (ORM, model client, retrieval), so it gets a thread of its
    own rather than a slot in the shared executor: a slow turn must not starve other chats.
    Leaving the loop early (client gone, task cancelled) sets `cancel`, which the pipeline
    checks between steps and tokens.
    """
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[object] = asyncio.Queue()

    def put(item: object) -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # the loop is gone: nobody listens any more
            cancel.set()

    def work() -> None:
        close_old_connections()
        try:
            for event in produce():
                put(event)
        except BaseException as exc:  # noqa: BLE001 - reported to the client as an error event
            log.exception("chat worker crashed")
            put(_Crash(exc))
        finally:
            # The thread dies with the turn: its own DB connections must go with it.
            connections.close_all()
            put(_END)

    thread = threading.Thread(target=work, name="chat-turn", daemon=True)
    thread.start()
    try:
        while True:
            item = await queue.get()
            if item is _END:
                return
            if isinstance(item, _Crash):
                yield error_event("internal", "内部错误，回答未能完成。")
                return
            assert isinstance(item, ChatEvent)
            yield item
    finally:
        cancel.set()
