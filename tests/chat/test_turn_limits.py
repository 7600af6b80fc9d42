"""Chat under load and faults: a silent model, a client that leaves, a full pool, a bad body, a dead database."""
from __future__ import annotations

import asyncio
import json
import socket
import time

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.core.asgi import get_asgi_application
from django.db import connections
from django.test import AsyncClient
from rest_framework.authtoken.models import Token

from chat.consumers import ChatConsumer
from chat.models import Conversation, Message, MessageStatus
from chat.runner import TurnRunner
from config_admin.services import config_set
from docmind.backends import reset_backends
from project.startup import warm_up
from tests.chat.chat_helpers import asgi_post, ingest_tiny_kb

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


@pytest.fixture
def runner(monkeypatch) -> TurnRunner:
    """A fresh pool per test, so that a test sees only its own turns."""
    fresh = TurnRunner(workers=2, queue=0)
    monkeypatch.setattr("chat.sse.get_turn_runner", lambda: fresh)
    monkeypatch.setattr("chat.consumers.get_turn_runner", lambda: fresh)
    return fresh


@pytest.fixture
def tiny_kb(db) -> None:
    """Ingested before the model goes silent: ingestion's own model calls are not a chat turn's."""
    ingest_tiny_kb()


@pytest.fixture
def silent_model(settings, silent_model_server):
    settings.OPENAI_API_KEY = "test-key"
    settings.OPENAI_BASE_URL = silent_model_server.base_url
    settings.LLM_TIMEOUT_SECONDS = 120  # what an operator might set; the turn's limits must still win
    reset_backends()
    yield silent_model_server
    reset_backends()


async def _token_headers(user) -> dict[str, str]:
    token = await sync_to_async(Token.objects.create)(user=user)
    return {"Authorization": f"Token {token.key}"}


async def _post(headers: dict[str, str], body: str | bytes) -> tuple[int, str, str]:
    response = await AsyncClient().post("/api/chat/", body, content_type="application/json", headers=headers)
    if response.streaming:
        raw = b"".join([c async for c in response.streaming_content])
    else:
        raw = response.content
    return response.status_code, response["Content-Type"], raw.decode()


def _sse_events(raw: str) -> list[tuple[str, dict]]:
    events = []
    for block in raw.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if not line.startswith(":"))
        if lines:
            events.append((lines["event"], json.loads(lines["data"])))
    return events


async def test_a_silent_model_ends_the_sse_turn_with_llm_timeout_at_the_deadline_with_heartbeats_before(
        member, tiny_kb, runner, silent_model, monkeypatch):
    # Loaded as a server loads them at start: the seconds of a first load are not the model's to time out.
    await sync_to_async(warm_up)(wait=True)
    monkeypatch.setattr("chat.sse.HEARTBEAT_SECONDS", 0.3)
    await sync_to_async(config_set)(key="chat.turn_deadline_seconds", value="3")
    await sync_to_async(config_set)(key="llm.interactive_timeout_seconds", value="1")
    started = time.monotonic()
    status, _, raw = await _post(await _token_headers(member), json.dumps({"message": "星河公司的年假有多少天？"}))
    took = time.monotonic() - started
    assert status == 200
    assert ": keepalive" in raw  # the seconds of waiting for the model are not silent
    kind, data = _sse_events(raw)[-1]
    assert kind == "error" and data["code"] == "llm_timeout"
    assert took < 60  # deadline 3 s (+ grace); the client's own 120 s timeout would hold it for minutes
    saved = await Message.objects.aget(pk=data["message_id"])
    assert saved.status == MessageStatus.ERROR and saved.error.startswith("llm_timeout")
    assert runner.in_flight() == 0


async def test_the_turns_thread_is_released_when_the_websocket_client_leaves(member, runner, silent_model):
    await sync_to_async(config_set)(key="chat.turn_deadline_seconds", value="120")
    await sync_to_async(config_set)(key="llm.interactive_timeout_seconds", value="60")
    communicator = WebsocketCommunicator(ChatConsumer.as_asgi(), "/ws/chat/")
    communicator.scope["user"] = member
    connected, _ = await communicator.connect()
    assert connected
    await communicator.send_json_to({"type": "ask", "message": "星河公司的年假有多少天？"})
    while silent_model.accepted == 0:  # the turn is now waiting on the model
        await asyncio.sleep(0.05)
    assert runner.in_flight() == 1
    started = time.monotonic()
    deadline = started + 30
    await communicator.disconnect()
    while runner.in_flight() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert runner.in_flight() == 0
    assert time.monotonic() - started < 30  # not the 60 s call timeout
    answer = await Message.objects.filter(role="assistant").alast()
    assert answer is not None and answer.status == MessageStatus.CANCELLED


async def test_the_turns_thread_is_released_when_the_sse_client_leaves(member, tiny_kb, runner, silent_model):
    await sync_to_async(config_set)(key="chat.turn_deadline_seconds", value="120")
    await sync_to_async(config_set)(key="llm.interactive_timeout_seconds", value="60")
    headers = await _token_headers(member)
    app = get_asgi_application()
    body = json.dumps({"message": "星河公司的年假有多少天？"}).encode()
    leave = asyncio.Event()
    request = asyncio.ensure_future(asgi_post(app, "/api/chat/", body, [(b"authorization",
                                                                           headers["Authorization"].encode())],
                                              leave=leave))
    while silent_model.accepted == 0 and not request.done():  # then the turn is waiting on the model
        await asyncio.sleep(0.05)
    assert runner.in_flight() == 1
    leave.set()
    left = time.monotonic()
    deadline = left + 30
    status, raw = await asyncio.wait_for(request, 30)
    assert status == 200 and b"event: understanding" not in raw
    while runner.in_flight() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert runner.in_flight() == 0
    assert time.monotonic() - left < 30  # not the 60 s call timeout
    answer = await Message.objects.filter(role="assistant").alast()
    assert answer is not None and answer.status == MessageStatus.CANCELLED


async def test_a_full_pool_answers_sse_with_a_json_503_busy_and_saves_nothing(member, runner):
    held = [runner.reserve(), runner.reserve()]
    headers = await _token_headers(member)
    status, content_type, raw = await _post(headers, json.dumps({"message": "你好"}))
    assert status == 503 and content_type == "application/json"
    assert json.loads(raw)["code"] == "server_busy"
    assert await Conversation.objects.acount() == 0
    for slot in held:
        slot.release()
    status, _, raw = await _post(headers, json.dumps({"message": "你好"}))
    assert status == 200 and _sse_events(raw)[-1][0] == "done"


async def test_a_user_past_their_share_gets_a_json_429_and_others_are_still_served(member, other_member,
                                                                                   monkeypatch):
    shared = TurnRunner(workers=2, queue=4, per_owner=2)
    monkeypatch.setattr("chat.sse.get_turn_runner", lambda: shared)
    held = [shared.reserve(owner=member.pk), shared.reserve(owner=member.pk)]  # e.g. two other open chats
    status, content_type, raw = await _post(await _token_headers(member), json.dumps({"message": "你好"}))
    assert status == 429 and content_type == "application/json"
    assert json.loads(raw)["code"] == "too_many_turns"
    assert await Conversation.objects.filter(user=member).acount() == 0  # refused before the question is saved
    status, _, raw = await _post(await _token_headers(other_member), json.dumps({"message": "你好"}))
    assert status == 200 and _sse_events(raw)[-1][0] == "done"
    for slot in held:
        slot.release()


async def test_a_user_past_their_share_gets_a_too_many_turns_event_on_the_websocket(member, monkeypatch):
    shared = TurnRunner(workers=2, queue=4, per_owner=1)
    monkeypatch.setattr("chat.consumers.get_turn_runner", lambda: shared)
    held = shared.reserve(owner=member.pk)
    communicator = WebsocketCommunicator(ChatConsumer.as_asgi(), "/ws/chat/")
    communicator.scope["user"] = member
    await communicator.connect()
    try:
        await communicator.send_json_to({"type": "ask", "message": "你好"})
        event = await communicator.receive_json_from(timeout=5)
        assert event["type"] == "error" and event["data"]["code"] == "too_many_turns"
    finally:
        held.release()
        await communicator.disconnect()


async def test_a_full_pool_answers_the_websocket_with_a_server_busy_event(member, runner):
    held = [runner.reserve(), runner.reserve()]
    communicator = WebsocketCommunicator(ChatConsumer.as_asgi(), "/ws/chat/")
    communicator.scope["user"] = member
    await communicator.connect()
    try:
        await communicator.send_json_to({"type": "ask", "message": "你好"})
        event = await communicator.receive_json_from(timeout=5)
        assert event["type"] == "error" and event["data"]["code"] == "server_busy"
        for slot in held:
            slot.release()
        await communicator.send_json_to({"type": "ask", "message": "你好"})
        kinds = []
        while not kinds or kinds[-1] not in ("done", "error"):
            kinds.append((await communicator.receive_json_from(timeout=30))["type"])
        assert kinds[-1] == "done"
    finally:
        await communicator.disconnect()


async def test_an_oversized_body_is_a_json_413(member, runner, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    status, content_type, raw = await _post(await _token_headers(member),
                                            json.dumps({"message": "x" * 2000}))
    assert status == 413 and content_type == "application/json"
    assert json.loads(raw)["code"] == "body_too_large"
    assert runner.in_flight() == 0


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_a_database_failure_is_a_json_503_not_an_html_page(member, runner):
    headers = await _token_headers(member)
    settings_dict = connections["default"].settings_dict
    saved = dict(settings_dict)
    await sync_to_async(connections.close_all)()
    # A real failure to connect: a path SQLite cannot open, or a MariaDB port nobody listens on.
    if settings_dict["ENGINE"].endswith("sqlite3"):
        settings_dict["NAME"] = "/nonexistent-docmind-dir/db.sqlite3"
    else:
        settings_dict.update(HOST="127.0.0.1", PORT=str(_closed_port()))
    try:
        status, content_type, raw = await _post(headers, json.dumps({"message": "你好"}))
    finally:
        await sync_to_async(connections.close_all)()
        settings_dict.clear()
        settings_dict.update(saved)
    assert status == 503 and content_type == "application/json"
    assert json.loads(raw)["code"] == "unavailable"
    assert runner.in_flight() == 0
