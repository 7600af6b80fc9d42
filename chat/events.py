"""The chat event protocol (the same over WebSocket and SSE): types, order, encoders.

Order of one turn::

    understanding → routing → (agentic)* → (code_exec)* → retrieval → rerank → grader
                  → start → (token)* → done

Non-knowledge scopes (greeting, identity/help, KB meta, memory, out of scope) skip retrieval:
``understanding → routing → start → (token)* → done``. A semantic-cache hit streams the full
sequence with the cached evidence. ``error`` ends a stream that cannot finish (bad input,
model timeout/500, cancellation, ``server_busy``); it carries ``code`` and ``message``, and
``conversation_id`` / ``message_id`` once the question was saved.

What each type's payload carries is chat.event_schema's: the tests hold every event sent to it, and the OpenAPI
document publishes it.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

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


# An SSE comment: clients ignore it, proxies and browsers see a live connection.
SSE_HEARTBEAT = b": keepalive\n\n"


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
