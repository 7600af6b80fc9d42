"""Helpers for the chat tests: a tiny ingested knowledge base and event collection."""
from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from chat.event_schema import validate_event
from chat.events import ChatEvent, order_problem

HANDBOOK_TITLE = "星河公司员工手册"
HANDBOOK = (
    "星河公司的年假为每年十五天，入职第一年按月折算。"
    "员工入职满一年后可以申请每周两天远程办公，需要直属经理批准。"
    "公司的报销申请需要在费用发生后三十天内提交，超过期限不予报销。"
)
BEARS_TITLE = "北极熊科普"
BEARS = (
    "北极熊主要生活在北极圈附近的海冰上，以环斑海豹为主要食物。"
    "成年雄性北极熊体重通常在三百五十公斤到七百公斤之间。"
    "北极熊的皮肤是黑色的，毛发中空透明，看起来是白色。"
)
QUESTION = "星河公司的年假有多少天？"


def ingest_tiny_kb() -> dict[str, int]:
    """Two small documents, ingested and indexed into a fresh default knowledge base; returns title → document id.

    The base is new (tests.isolation): earlier tests' rows in the session's shared Milvus file would
    otherwise change what a question retrieves and how its evidence is scored (tests of abstention and
    confidence need exactly these two documents)."""
    from kb.ingestion.worker import process_pending_documents
    from kb.services import document_ingest_text
    from tests.isolation import fresh_default_kb

    fresh_default_kb()
    ids = {}
    for title, text in ((HANDBOOK_TITLE, HANDBOOK), (BEARS_TITLE, BEARS)):
        document, _ = document_ingest_text(title=title, text=text, domain="demo")
        ids[title] = document.pk
    process_pending_documents()
    return ids


def ingest_new_base(name: str, *, title: str, text: str, domain: str):
    """A new knowledge base holding one ingested document, over emptied vector and BM25 stores; returns the base."""
    from docmind.backends import get_embedder
    from docmind.indexes.stores import get_lexical_index, get_vector_store
    from kb import services
    from kb.ingestion.worker import process_pending_documents

    get_vector_store().reset(embedder_name=get_embedder().name, dim=get_embedder().dim)
    get_lexical_index().reset()
    base = services.kb_create(name=name)
    services.document_ingest_text(title=title, text=text, domain=domain, kb=base)
    process_pending_documents()
    return base


def collect(events: Iterable[ChatEvent]) -> list[ChatEvent]:
    return list(events)


def types(events: Iterable[ChatEvent]) -> list[str]:
    return [e.type for e in events]


def by_type(events: Iterable[ChatEvent], kind: str) -> ChatEvent:
    return next(e for e in events if e.type == kind)


def assert_events_follow_the_contract(events: Iterable[ChatEvent | Mapping[str, Any] | tuple[str, Any]], *,
                                      view_only: bool = False, whole_turn: bool = True) -> list[str]:
    """Every event valid against chat.event_schema (pydantic's ValidationError names the field that is not) and,
    for a `whole_turn`, the stream in protocol order; returns the types. Events are ChatEvents (checked as their
    JSON, which is what leaves the server), WebSocket frames, or (type, payload) pairs of a parsed SSE stream."""
    kinds = []
    for event in events:
        if isinstance(event, ChatEvent):
            kind, data = event.type, json.dumps(event.data, ensure_ascii=False)
        elif isinstance(event, Mapping):
            kind, data = event["type"], event["data"]
        else:
            kind, data = event
        validate_event(kind, data, view_only=view_only)
        kinds.append(kind)
    assert not whole_turn or order_problem(kinds) is None, kinds
    return kinds


def no_cancel() -> threading.Event:
    return threading.Event()


async def asgi_post(app, path: str, body: bytes, headers: list[tuple[bytes, bytes]],
                    leave: asyncio.Event | None = None) -> tuple[int, bytes]:
    """One HTTP request through the real ASGI handler, as a server would send it.

    Django's test client replaces the handler's connection handling, so tests about database
    connections or client disconnects go through here. With `leave` the client disconnects as soon
    as that event is set.
    """
    finished = asyncio.Event()
    sent = False
    status = 0
    chunks: list[bytes] = []

    async def receive() -> dict:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        waits = [asyncio.ensure_future(finished.wait())]
        if leave is not None:
            waits.append(asyncio.ensure_future(leave.wait()))
        _, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()
        return {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                finished.set()

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
             "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"),
                         (b"content-length", str(len(body)).encode()), *headers],
             "client": ("127.0.0.1", 40000), "server": ("127.0.0.1", 80)}
    await app(scope, receive, send)
    return status, b"".join(chunks)
