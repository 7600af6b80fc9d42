"""SSE `POST /api/chat/` through Django's HTTP stack: auth, CSRF, 4xx before streaming, the event stream."""
from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient
from rest_framework.authtoken.models import Token

from chat.models import Conversation, Message
from chat.pipeline import ChatPipeline
from tests.chat.chat_helpers import HANDBOOK_TITLE, QUESTION, assert_events_follow_the_contract, ingest_tiny_kb

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def parse_sse(raw: str) -> list[tuple[str, dict]]:
    events = []
    for block in raw.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


async def _token_client(user) -> AsyncClient:
    token = await sync_to_async(Token.objects.create)(user=user)
    client = AsyncClient()
    client.auth_headers = {"Authorization": f"Token {token.key}"}
    return client


async def _post(client: AsyncClient, body) -> tuple[int, str, object]:
    response = await client.post("/api/chat/", body if isinstance(body, str) else json.dumps(body),
                                 content_type="application/json", headers=getattr(client, "auth_headers", None))
    if response.streaming:
        chunks = [c async for c in response.streaming_content]
        return response.status_code, response["Content-Type"], b"".join(chunks).decode()
    return response.status_code, response["Content-Type"], json.loads(response.content)


async def test_a_question_streams_the_events_as_text_event_stream(member):
    await sync_to_async(ingest_tiny_kb)()
    status, content_type, raw = await _post(await _token_client(member), {"message": QUESTION})
    assert status == 200 and content_type.startswith("text/event-stream")
    events = parse_sse(raw)
    assert_events_follow_the_contract(events)
    kind, done = events[-1]
    assert kind == "done" and "[1]" in done["answer"]
    assert done["citations"][0]["document_title"] == HANDBOOK_TITLE
    assert await Message.objects.filter(conversation_id=done["conversation_id"]).acount() == 2


def _failing_stages(snapshot, *, kb_ids):
    raise RuntimeError("a stage could not be built")


async def test_a_turn_that_fails_streams_an_error_event_of_the_contract(member, monkeypatch):
    monkeypatch.setattr("chat.sse.pipeline_factory", lambda: ChatPipeline(stages_factory=_failing_stages))
    status, _, raw = await _post(await _token_client(member), {"message": QUESTION})
    events = parse_sse(raw)
    assert status == 200 and assert_events_follow_the_contract(events) == ["error"]
    error = events[-1][1]
    assert error["code"] == "internal" and error["conversation_id"] and error["message_id"]


async def test_regenerate_over_sse_replaces_the_last_answer(member):
    await sync_to_async(ingest_tiny_kb)()
    client = await _token_client(member)
    _, _, raw = await _post(client, {"message": QUESTION})
    first = parse_sse(raw)[-1][1]
    _, _, raw = await _post(client, {"message": QUESTION, "conversation_id": first["conversation_id"],
                                     "regenerate": True})
    kind, again = parse_sse(raw)[-1]
    assert kind == "done" and again["message_id"] == first["message_id"]
    assert await Message.objects.filter(conversation_id=first["conversation_id"]).acount() == 2


async def test_an_edit_over_sse_rewrites_the_last_question(member):
    await sync_to_async(ingest_tiny_kb)()
    client = await _token_client(member)
    _, _, raw = await _post(client, {"message": QUESTION})
    first = parse_sse(raw)[-1][1]
    _, _, raw = await _post(client, {"message": "年假怎么算？", "conversation_id": first["conversation_id"],
                                     "edit": True})
    assert parse_sse(raw)[-1][0] == "done"
    contents = [m async for m in Message.objects.filter(conversation_id=first["conversation_id"])
                .order_by("id").values_list("content", flat=True)]
    assert len(contents) == 2 and contents[0] == "年假怎么算？"


@pytest.mark.parametrize(("body", "status"), [
    ({"message": ""}, 400), ({"message": "x" * 4001}, 400), ({}, 400), ("{not json", 400),
    ({"message": "hi", "conversation_id": "abc"}, 400), ({"message": "hi", "document_id": 987654}, 404),
    ({"message": "hi", "regenerate": "yes"}, 400), ({"message": "hi", "edit": 1}, 400),
    ({"message": "hi", "regenerate": True}, 400),
])
async def test_bad_requests_are_4xx_json_before_streaming(member, body, status):
    got, content_type, payload = await _post(await _token_client(member), body)
    assert got == status and content_type == "application/json"
    assert "error" in payload
    assert payload.get("code") != "nothing_to_regenerate" or body.get("regenerate") is True
    assert await Conversation.objects.acount() == 0


async def test_another_users_conversation_is_404(member, other_member):
    theirs = await Conversation.objects.acreate(user=other_member, title="secret")
    status, _, payload = await _post(await _token_client(member), {"message": "hi", "conversation_id": theirs.pk})
    assert status == 404 and payload["code"] == "conversation_not_found"


async def test_anonymous_is_401():
    status, _, _ = await _post(AsyncClient(), {"message": "hi"})
    assert status in (401, 403)


async def test_session_auth_needs_the_csrf_token(member):
    client = AsyncClient(enforce_csrf_checks=True)
    await client.aforce_login(member)
    status, _, payload = await _post(client, {"message": "你好"})
    assert status == 403 and "CSRF" in payload["error"]


async def test_session_auth_with_csrf_streams(member):
    client = AsyncClient(enforce_csrf_checks=True)
    await client.aforce_login(member)
    page = await client.get("/")  # sets the csrftoken cookie
    assert page.status_code == 200
    token = client.cookies["csrftoken"].value
    response = await client.post("/api/chat/", json.dumps({"message": "你好"}), content_type="application/json",
                                 headers={"X-CSRFToken": token})
    raw = b"".join([c async for c in response.streaming_content]).decode()
    assert response.status_code == 200 and parse_sse(raw)[-1][0] == "done"


async def test_get_is_not_allowed(member):
    client = await _token_client(member)
    assert (await client.get("/api/chat/", headers=client.auth_headers)).status_code == 405
