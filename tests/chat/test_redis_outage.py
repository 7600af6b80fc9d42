"""With the Redis behind the cache and the channel layer stopped, chat still answers (SSE and WebSocket)."""
from __future__ import annotations

import json
import logging

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.core.cache import cache
from django.test import AsyncClient
from rest_framework.authtoken.models import Token

from chat.consumers import ChatConsumer
from kb.selectors import kb_version
from tests.chat.chat_helpers import QUESTION, ingest_tiny_kb

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


@pytest.fixture
def tiny_kb(own_redis) -> None:
    ingest_tiny_kb()


def test_kb_version_does_not_raise_and_the_outage_is_logged_once(own_redis, caplog):
    up = kb_version()
    assert kb_version() == up  # kept in Redis while it runs
    own_redis.stop()
    with caplog.at_level(logging.WARNING, logger="docmind.cache"):
        versions = [kb_version() for _ in range(5)]
        cache.set("anything", 1)
        assert cache.get("anything") is None  # an error reads as a miss
    assert all(isinstance(v, int) and v != up for v in versions)  # fresh versions: the answer cache misses
    assert len([r for r in caplog.records if r.name == "docmind.cache"]) == 1


async def test_an_sse_turn_answers_while_redis_is_down(member, tiny_kb, own_redis):
    await sync_to_async(own_redis.stop)()
    token = await sync_to_async(Token.objects.create)(user=member)
    response = await AsyncClient().post("/api/chat/", json.dumps({"message": QUESTION}),
                                        content_type="application/json",
                                        headers={"Authorization": f"Token {token.key}"})
    raw = b"".join([c async for c in response.streaming_content]).decode()
    assert response.status_code == 200
    assert "event: done" in raw and "event: error" not in raw


async def test_a_websocket_turn_answers_while_redis_is_down(member, tiny_kb, own_redis):
    await sync_to_async(own_redis.stop)()
    communicator = WebsocketCommunicator(ChatConsumer.as_asgi(), "/ws/chat/")
    communicator.scope["user"] = member
    connected, _ = await communicator.connect()
    assert connected
    try:
        await communicator.send_json_to({"type": "ask", "message": QUESTION})
        kinds = []
        while not kinds or kinds[-1] not in ("done", "error"):
            kinds.append((await communicator.receive_json_from(timeout=30))["type"])
        assert kinds[-1] == "done"
    finally:
        await communicator.disconnect()
