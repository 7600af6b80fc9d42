"""On the real MariaDB, concurrent SSE and WebSocket turns through the ASGI stack leave no connection behind."""
from __future__ import annotations

import asyncio
import json
import time

import pytest
from asgiref.sync import sync_to_async
from channels.auth import AuthMiddlewareStack
from channels.routing import URLRouter
from channels.security.websocket import AllowedHostsOriginValidator
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.core.asgi import get_asgi_application
from django.test import Client
from rest_framework.authtoken.models import Token

from chat.routing import websocket_urlpatterns
from chat.runner import TurnRunner
from tests.chat.chat_helpers import QUESTION, asgi_post, ingest_tiny_kb
from tests.project.test_settings import mysql  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

SSE_TURNS = 16
WS_TURNS = 4


def _connections_to(database: str) -> int:
    """Connections MariaDB holds for this database (other databases on the same server are not counted)."""
    import MySQLdb  # installed only where DATABASE_URL names MySQL

    db = settings.DATABASES["default"]
    probe = MySQLdb.connect(host=db["HOST"] or "127.0.0.1", port=int(db["PORT"] or 3306), user=db["USER"],
                            password=db["PASSWORD"] or "")
    try:
        with probe.cursor() as cursor:
            cursor.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = %s", (database,))
            return int(cursor.fetchone()[0])
    finally:
        probe.close()


async def _ws_turn(app, cookie: bytes) -> str:
    communicator = WebsocketCommunicator(app, "/ws/chat/",
                                         headers=[(b"cookie", cookie), (b"origin", b"http://127.0.0.1"),
                                                  (b"host", b"127.0.0.1")])
    connected, _ = await communicator.connect(timeout=30)
    assert connected
    try:
        await communicator.send_json_to({"type": "ask", "message": QUESTION})
        kind = ""
        while kind not in ("done", "error"):
            kind = (await communicator.receive_json_from(timeout=120))["type"]
        return kind
    finally:
        await communicator.disconnect()


async def test_concurrent_sse_and_websocket_turns_return_connections_to_the_baseline(mysql, member,  # noqa: F811
                                                                                      monkeypatch):
    runner = TurnRunner(workers=4, queue=SSE_TURNS + WS_TURNS, per_owner=SSE_TURNS + WS_TURNS)  # all one user's
    monkeypatch.setattr("chat.sse.get_turn_runner", lambda: runner)
    monkeypatch.setattr("chat.consumers.get_turn_runner", lambda: runner)
    await sync_to_async(ingest_tiny_kb)()
    token = await sync_to_async(Token.objects.create)(user=member)
    web = Client()
    await sync_to_async(web.force_login)(member)
    cookie = f"{settings.SESSION_COOKIE_NAME}={web.cookies[settings.SESSION_COOKIE_NAME].value}".encode()
    http_app = get_asgi_application()
    ws_app = AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns)))
    database = settings.DATABASES["default"]["NAME"]
    baseline = await sync_to_async(_connections_to)(database)

    body = json.dumps({"message": QUESTION}).encode()
    auth = [(b"authorization", f"Token {token.key}".encode())]
    results = await asyncio.gather(*[asgi_post(http_app, "/api/chat/", body, auth) for _ in range(SSE_TURNS)],
                                   *[_ws_turn(ws_app, cookie) for _ in range(WS_TURNS)])
    sse, ws = results[:SSE_TURNS], results[SSE_TURNS:]
    assert all(status == 200 and b"event: done" in raw for status, raw in sse)
    assert ws == ["done"] * WS_TURNS

    deadline = time.monotonic() + 30  # connections close as their threads end; a loaded machine takes longer
    held = await sync_to_async(_connections_to)(database)
    while held > baseline and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
        held = await sync_to_async(_connections_to)(database)
    assert held <= baseline, f"{held - baseline} connections left open after {SSE_TURNS + WS_TURNS} turns"
