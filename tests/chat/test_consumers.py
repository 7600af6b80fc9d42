"""WebSocket `/ws/chat/` through the real ASGI stack (origin validator, session auth, router)."""
from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client

from chat.models import Message
from project.routing import application
from tests.chat.chat_helpers import HANDBOOK_TITLE, QUESTION, assert_events_follow_the_contract, ingest_tiny_kb

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

ORIGIN = (b"origin", b"http://localhost")


def _session_cookie(user) -> bytes:
    client = Client()
    client.force_login(user)
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}".encode()


async def _socket(user=None, origin: tuple[bytes, bytes] = ORIGIN, *, accept_language: str = "",
                  language_cookie: str = "") -> WebsocketCommunicator:
    headers = [origin, (b"host", b"localhost")]
    cookies = []
    if user is not None:
        cookies.append(await sync_to_async(_session_cookie)(user))
    if language_cookie:
        cookies.append(f"{settings.LANGUAGE_COOKIE_NAME}={language_cookie}".encode())
    if cookies:
        headers.append((b"cookie", b"; ".join(cookies)))
    if accept_language:
        headers.append((b"accept-language", accept_language.encode()))
    return WebsocketCommunicator(application, "/ws/chat/", headers=headers)


async def _until_end(ws: WebsocketCommunicator, timeout: float = 60) -> list[dict]:
    got = []
    while True:
        frame = await ws.receive_json_from(timeout=timeout)
        got.append(frame)
        if frame["type"] in ("done", "error"):
            return got


async def test_anonymous_sockets_are_closed_with_4401():
    ws = await _socket()
    try:
        connected, _ = await ws.connect()
        assert connected
        assert await ws.receive_output(timeout=5) == {"type": "websocket.close", "code": 4401}
    finally:
        await ws.disconnect()


async def test_a_foreign_origin_is_rejected(member):
    ws = await _socket(member, origin=(b"origin", b"https://evil.example"))
    try:
        connected, _ = await ws.connect()
        assert not connected
    finally:
        await ws.disconnect()


@pytest.mark.parametrize("frame", [
    "not json", "[1, 2]", json.dumps({"type": "shout"}), json.dumps({"type": "ask", "message": 5}),
    json.dumps({"type": "ask", "message": "hi", "conversation_id": "7"}),
    json.dumps({"type": "ask", "message": "hi", "document_id": True}),
])
async def test_malformed_frames_get_an_error_and_the_socket_still_works(member, frame):
    ws = await _socket(member)
    try:
        assert (await ws.connect())[0]
        await ws.send_to(text_data=frame)
        reply = await ws.receive_json_from(timeout=5)
        assert reply["type"] == "error" and reply["data"]["code"] == "bad_frame"
        await ws.send_json_to({"type": "ask", "message": "  "})  # still served
        refused = await ws.receive_json_from(timeout=10)
        assert refused["type"] == "error" and refused["data"]["code"] == "empty_message"
        assert_events_follow_the_contract([reply])
        assert_events_follow_the_contract([refused])
    finally:
        await ws.disconnect()


async def test_a_full_ask_streams_to_done_and_saves_both_messages(member):
    await sync_to_async(ingest_tiny_kb)()
    ws = await _socket(member)
    try:
        assert (await ws.connect())[0]
        await ws.send_json_to({"type": "ask", "message": QUESTION})
        frames = await _until_end(ws)
        assert_events_follow_the_contract(frames)
        done = frames[-1]["data"]
        assert "[1]" in done["answer"] and done["citations"][0]["document_title"] == HANDBOOK_TITLE
        count = await Message.objects.filter(conversation_id=done["conversation_id"]).acount()
        assert count == 2
    finally:
        await ws.disconnect()


async def test_another_users_conversation_is_an_error_event(member, other_member):
    from chat.models import Conversation

    theirs = await Conversation.objects.acreate(user=other_member, title="secret")
    ws = await _socket(member)
    try:
        assert (await ws.connect())[0]
        await ws.send_json_to({"type": "ask", "message": QUESTION, "conversation_id": theirs.pk})
        frame = await ws.receive_json_from(timeout=10)
        assert frame["type"] == "error"
        assert (frame["data"]["code"], frame["data"]["status"]) == ("conversation_not_found", 404)
    finally:
        await ws.disconnect()


async def test_cancel_stops_the_turn_and_saves_it_as_cancelled(member, monkeypatch):
    from chat.pipeline import ChatPipeline

    await sync_to_async(ingest_tiny_kb)()
    answer = ChatPipeline.run

    def run_once_cancelled(self, *, user, cancel, **fields):
        # The turn starts answering only after the client's cancel reached the consumer: no race to accept.
        assert cancel.wait(10)
        yield from answer(self, user=user, cancel=cancel, **fields)

    monkeypatch.setattr(ChatPipeline, "run", run_once_cancelled)
    ws = await _socket(member)
    try:
        assert (await ws.connect())[0]
        await ws.send_json_to({"type": "ask", "message": QUESTION})
        await ws.send_json_to({"type": "cancel"})
        frames = await _until_end(ws)
        assert (frames[-1]["type"], frames[-1]["data"]["code"]) == ("error", "cancelled")
        assert_events_follow_the_contract(frames)
        statuses = [s async for s in Message.objects.values_list("status", flat=True)]
        assert statuses == ["complete", "cancelled"]
    finally:
        await ws.disconnect()


@pytest.mark.parametrize(("accept", "cookie", "bad_frame", "empty"), [
    ("en-US,en;q=0.9", "", "The frame is not valid JSON.", "The question must not be empty."),
    ("zh-CN,zh;q=0.9", "", "这一帧不是有效的 JSON。", "问题不能为空。"),
    ("zh-CN,zh;q=0.9", "en", "The frame is not valid JSON.", "The question must not be empty."),
])
async def test_messages_follow_the_users_language_from_the_handshake(member, accept, cookie, bad_frame, empty):
    ws = await _socket(member, accept_language=accept, language_cookie=cookie)
    try:
        assert (await ws.connect())[0]
        await ws.send_to(text_data="{not json")
        reply = await ws.receive_json_from(timeout=10)
        assert reply["data"]["message"] == bad_frame
        # This one is written by the turn's worker thread, which does not inherit the socket's language.
        await ws.send_json_to({"type": "ask", "message": "   "})
        reply = await ws.receive_json_from(timeout=30)
        assert reply["data"]["code"] == "empty_message" and reply["data"]["message"] == empty
    finally:
        await ws.disconnect()


async def test_a_frame_over_the_limit_gets_an_error_event_then_a_1009_close(member):
    from chat.consumers import MAX_FRAME_BYTES

    ws = await _socket(member)
    try:
        assert (await ws.connect())[0]
        await ws.send_to(text_data=json.dumps({"type": "ask", "message": "x" * MAX_FRAME_BYTES}))
        reply = await ws.receive_json_from(timeout=5)
        assert reply["type"] == "error" and reply["data"]["code"] == "frame_too_large"
        assert await ws.receive_output(timeout=5) == {"type": "websocket.close", "code": 1009}
    finally:
        await ws.disconnect()


async def test_a_deeply_nested_frame_is_a_bad_frame_and_the_socket_still_works(member):
    ws = await _socket(member)
    try:
        assert (await ws.connect())[0]
        await ws.send_to(text_data="[" * 100_000 + "]" * 100_000)
        reply = await ws.receive_json_from(timeout=5)
        assert reply["type"] == "error" and reply["data"]["code"] == "bad_frame"
        await ws.send_json_to({"type": "ask", "message": "  "})
        reply = await ws.receive_json_from(timeout=10)
        assert reply["data"]["code"] == "empty_message"
    finally:
        await ws.disconnect()


async def test_a_deactivated_users_open_socket_takes_no_more_turns(member):
    ws = await _socket(member)
    try:
        assert (await ws.connect())[0]
        member.is_active = False
        await member.asave(update_fields=["is_active"])
        await ws.send_json_to({"type": "ask", "message": QUESTION})
        reply = await ws.receive_json_from(timeout=5)
        assert reply["type"] == "error" and reply["data"]["code"] == "unauthenticated"
        assert await ws.receive_output(timeout=5) == {"type": "websocket.close", "code": 4401}
        assert await Message.objects.filter(conversation__user=member).acount() == 0
    finally:
        await ws.disconnect()
