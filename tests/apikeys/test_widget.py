"""The chat widget's server side: the frame only for listed origins (Referer checked, frame-ancestors sent),
and a widget key usable only with the ticket its frame was served with — never bare, never on MCP."""
from __future__ import annotations

import json
import re

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient, Client

from apikeys import services as keys
from apikeys.models import ApiKey
from tests.apikeys.world import HR_MARKER, HR_QUESTION, _api

pytestmark = pytest.mark.django_db(transaction=True)

INTRANET = "http://intranet.example:8080"


def _widget_key(world, **extra) -> str:
    values = {"scope": "ask", "allowed_origins": [INTRANET], **extra}
    return keys.key_create(creator=world["eddie"], name="Helpdesk", kb_ids=[world["hr"].pk], **values).secret


def _frame(secret: str, referer: str | None):
    headers = {"HTTP_REFERER": referer} if referer else {}
    return Client().get("/widget/frame/", {"key": secret}, **headers)


def _ticket(page) -> str:
    return re.search(r'data-ticket="([^"]+)"', page.content.decode()).group(1)


def test_the_frame_is_served_to_a_listed_origin_with_frame_ancestors(world):
    page = _frame(_widget_key(world), INTRANET + "/wiki/page")
    assert page.status_code == 200
    policy = page["Content-Security-Policy"]
    assert f"frame-ancestors {INTRANET}" in policy and "X-Frame-Options" not in page
    assert _ticket(page) and page["Referrer-Policy"] == "no-referrer"


@pytest.mark.parametrize("referer", [None, "http://elsewhere.example/", "http://intranet.example:9090/"])
def test_the_frame_refuses_any_other_embedding_page(world, referer):
    page = _frame(_widget_key(world), referer)
    assert page.status_code == 403 and "data-ticket" not in page.content.decode()
    assert f"frame-ancestors {INTRANET}" in page["Content-Security-Policy"]


def test_the_frame_answers_404_alike_for_unknown_revoked_and_non_widget_keys(world):
    read_key = keys.key_create(creator=world["eddie"], name="bot", kb_ids=[world["hr"].pk], scope="read").secret
    revoked = _widget_key(world)
    keys.key_revoke(user=world["eddie"], key_id=ApiKey.objects.get(name="Helpdesk").pk)
    pages = [_frame(s, INTRANET + "/") for s in (read_key, revoked, "dmk_000000000000_" + "x" * 43, "")]
    assert {p.status_code for p in pages} == {404}
    assert len({p.content for p in pages}) == 1


async def _ask(secret: str, ticket: str | None, message: str = HR_QUESTION) -> tuple[int, str]:
    headers = {"Authorization": f"Bearer {secret}"}
    if ticket:
        headers["X-DocMind-Widget"] = ticket
    response = await AsyncClient().post("/api/chat/", json.dumps({"message": message}),
                                        content_type="application/json", headers=headers)
    if response.streaming:
        return response.status_code, b"".join([c async for c in response.streaming_content]).decode()
    return response.status_code, response.content.decode()


async def test_a_widget_key_asks_only_with_its_frames_ticket(world):
    secret = await sync_to_async(_widget_key)(world)
    other = await sync_to_async(_widget_key)(world)
    ticket = _ticket(await sync_to_async(_frame)(secret, INTRANET + "/"))
    other_ticket = _ticket(await sync_to_async(_frame)(other, INTRANET + "/"))
    status, raw = await _ask(secret, ticket)
    assert status == 200 and HR_MARKER in raw and '"citations"' in raw
    # A visitor cites by title and snippet: nothing points at the reader, which is for signed-in readers.
    assert '"reader_url":null' in raw and '"reader_url":"' not in raw
    assert (await _ask(secret, None))[0] == 401
    assert (await _ask(secret, other_ticket))[0] == 401
    assert (await _ask(secret, ticket[:-2] + "xx"))[0] == 401


def test_a_widget_key_neither_retrieves_nor_reaches_mcp(world):
    secret = _widget_key(world)
    ticket = _ticket(_frame(secret, INTRANET + "/"))
    api = _api(key=secret)
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}", HTTP_X_DOCMIND_WIDGET=ticket)
    assert api.post("/api/kb/retrieve/", {"query": HR_QUESTION}, format="json").status_code == 403
    assert api.get("/api/kb/documents/").status_code == 403
    from project.mcp.asgi import _token_user_id

    assert _token_user_id([(b"authorization", f"Bearer {secret}".encode())])[0] is None


def test_dropping_an_origin_voids_the_tickets_issued_to_it(world):
    secret = _widget_key(world)
    ticket = _ticket(_frame(secret, INTRANET + "/"))
    ApiKey.objects.update(allowed_origins=["http://other.example"])
    with pytest.raises(keys.KeyInvalid):
        keys.authenticate_key(secret, widget_ticket=ticket)
