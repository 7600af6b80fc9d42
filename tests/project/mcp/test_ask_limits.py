"""MCP `ask` runs as a chat turn: the chat's deadline, capacity, per-user share and cancellation on disconnect."""
from __future__ import annotations

import asyncio
import json
import time

import httpx2
import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.asgi import get_asgi_application
from django.utils import translation
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from rest_framework.authtoken.models import Token

from chat.models import Message, MessageStatus
from chat.runner import TOO_MANY_MESSAGE, TurnRunner
from config_admin.services import config_set
from docmind.backends import reset_backends
from project.mcp.asgi import McpMount
from tests.chat.chat_helpers import ingest_tiny_kb

pytestmark = pytest.mark.django_db(transaction=True)

APP = McpMount(get_asgi_application())
QUESTION = "星河公司的年假有多少天？"


@pytest.fixture
def runner(monkeypatch) -> TurnRunner:
    fresh = TurnRunner(workers=16, queue=0, per_owner=8)
    monkeypatch.setattr("chat.runner.get_turn_runner", lambda: fresh)
    return fresh


@pytest.fixture
def silent_model(settings, silent_model_server):
    ingest_tiny_kb()  # before the model goes silent: ingestion's model calls are not a turn's
    settings.OPENAI_API_KEY = "test-key"
    settings.OPENAI_BASE_URL = silent_model_server.base_url
    settings.LLM_TIMEOUT_SECONDS = 120
    reset_backends()
    yield silent_model_server
    reset_backends()


def _client(token: str) -> Client:
    http = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=APP), base_url="http://127.0.0.1",
                              headers={"Authorization": f"Token {token}"}, timeout=120)
    return Client(streamable_http_client("http://127.0.0.1/mcp/", http_client=http))


async def _token(user) -> str:
    return (await sync_to_async(Token.objects.create)(user=user)).key


def _in_default_language(message) -> str:
    with translation.override(settings.LANGUAGE_CODE):  # MCP has no page language
        return str(message)


async def _limits(deadline: int, call_timeout: int) -> None:
    await sync_to_async(config_set)(key="chat.turn_deadline_seconds", value=str(deadline))
    await sync_to_async(config_set)(key="llm.interactive_timeout_seconds", value=str(call_timeout))


async def test_ask_with_a_silent_model_ends_at_the_chat_turns_deadline(member, runner, silent_model):
    await _limits(deadline=3, call_timeout=1)
    token = await _token(member)
    started = time.monotonic()
    async with _client(token) as mcp:
        result = await mcp.call_tool("ask", {"question": QUESTION})
    assert result.is_error
    assert time.monotonic() - started < 15  # the 3 s deadline, not the model client's 120 s
    await _until_idle(runner)
    # The turn ended unanswered, its question kept: with the pipeline's own timeout error, or cancelled when the
    # runner ended the stream at the deadline first.
    answer = await Message.objects.filter(role="assistant", conversation__user=member).alast()
    assert answer is not None and answer.status in (MessageStatus.ERROR, MessageStatus.CANCELLED)


async def test_hanging_asks_hold_turn_slots_and_leave_tools_list_answerable(member, runner, silent_model):
    await _limits(deadline=120, call_timeout=60)
    token = await _token(member)
    asks = [asyncio.ensure_future(_ask_once(token)) for _ in range(8)]
    try:
        for _ in range(400):
            if runner.in_flight() == 8:
                break
            await asyncio.sleep(0.05)
        assert runner.in_flight() == 8  # every ask is a chat turn, counted in the chat's capacity
        async with _client(token) as mcp:
            tools = await asyncio.wait_for(mcp.list_tools(), timeout=20)
        assert "ask" in {t.name for t in tools.tools}
        async with _client(token) as mcp:  # past the user's share: refused at once, not queued
            refused = await asyncio.wait_for(mcp.call_tool("ask", {"question": QUESTION}), timeout=20)
        assert refused.is_error and _in_default_language(TOO_MANY_MESSAGE) in refused.content[0].text
    finally:
        for task in asks:
            task.cancel()
        await asyncio.gather(*asks, return_exceptions=True)
    await _until_idle(runner)


async def _until_idle(runner: TurnRunner, seconds: float = 10) -> None:
    """The turn's thread gives its slot back once it has saved the outcome, a moment after the stream ends."""
    for _ in range(int(seconds / 0.05)):
        if runner.in_flight() == 0:
            return
        await asyncio.sleep(0.05)
    assert runner.in_flight() == 0


async def _ask_once(token: str):
    async with _client(token) as mcp:
        return await mcp.call_tool("ask", {"question": QUESTION})


async def test_ask_is_cancelled_when_the_http_client_disconnects(member, runner, silent_model):
    await _limits(deadline=120, call_timeout=60)
    token = await _token(member)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "ask", "arguments": {"question": QUESTION}}}).encode()
    leave = asyncio.Event()
    sent: list[dict] = []
    delivered = False

    async def receive() -> dict:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await leave.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/mcp/", "raw_path": b"/mcp/", "query_string": b"",
             "root_path": "", "scheme": "http", "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 5000),
             "http_version": "1.1", "asgi": {"version": "3.0"},
             "headers": [(b"host", b"127.0.0.1"), (b"authorization", f"Token {token}".encode()),
                         (b"content-type", b"application/json"), (b"accept", b"application/json, text/event-stream"),
                         (b"content-length", str(len(body)).encode())]}
    call = asyncio.ensure_future(APP(scope, receive, send))
    try:
        for _ in range(600):
            if silent_model.accepted and runner.in_flight() == 1:
                break
            await asyncio.sleep(0.05)
        assert runner.in_flight() == 1  # the turn is waiting on the model
        started = time.monotonic()
        leave.set()
        for _ in range(200):
            if runner.in_flight() == 0:
                break
            await asyncio.sleep(0.05)
        assert runner.in_flight() == 0
        assert time.monotonic() - started < 30  # not the 60 s call timeout
        answer = await Message.objects.filter(role="assistant").alast()
        assert answer is not None and answer.status == MessageStatus.CANCELLED
    finally:
        leave.set()
        try:
            await asyncio.wait_for(call, timeout=30)
        except Exception:  # noqa: BLE001 - the response may fail to send to a gone client
            pass
