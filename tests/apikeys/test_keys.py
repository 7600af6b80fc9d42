"""API keys: issued by base editors, shown once, stored hashed; a key reaches its bases and scope only,
whatever its creator may, on the REST API, the SSE chat and MCP; unusable keys answer like bad credentials.

Eddie edits HR and reads Finance (markers in each); his keys name HR only, so finding the Finance marker in
anything a key receives means the key reached past its scope.
"""
from __future__ import annotations

import hashlib
import json
from datetime import timedelta

import httpx2
import pytest
from asgiref.sync import sync_to_async
from django.core.asgi import get_asgi_application
from django.test import AsyncClient
from django.utils import timezone
from mcp import Client as McpClient
from mcp.client.streamable_http import streamable_http_client

from apikeys import services as keys
from apikeys.models import ApiKey
from kb import services
from project.mcp.asgi import McpMount
from tests.apikeys.world import FIN_MARKER, FIN_QUESTION, HR_MARKER, HR_QUESTION, _api

pytestmark = pytest.mark.django_db(transaction=True)

def _issue(world, scope: str, **extra) -> str:
    return keys.key_create(creator=world["eddie"], name=f"{scope} key", kb_ids=[world["hr"].pk], scope=scope,
                           **extra).secret


def test_an_editor_issues_a_key_shown_once_and_stored_hashed(world):
    api = _api(world["eddie"])
    response = api.post("/api/keys/", {"name": "wiki bot", "kbs": [world["hr"].pk], "scope": "read"}, format="json")
    assert response.status_code == 201, response.content
    secret = response.json()["key"]
    row = ApiKey.objects.get(pk=response.json()["id"])
    assert secret.startswith("dmk_") and secret not in json.dumps(list(ApiKey.objects.values()), default=str)
    assert row.key_hash == hashlib.sha256(secret.encode()).hexdigest()
    listed = api.get("/api/keys/").json()
    assert [k["id"] for k in listed] == [row.pk] and "key" not in listed[0] and secret not in json.dumps(listed)
    assert listed[0]["kbs"] == [world["hr"].pk] and listed[0]["last_used_at"] is None


def test_only_editors_issue_keys_and_only_for_bases_they_edit(world):
    hr, fin = world["hr"], world["fin"]
    body = {"name": "k", "kbs": [hr.pk], "scope": "ask"}
    assert _api(world["mia"]).post("/api/keys/", body, format="json").status_code == 403
    eddie = _api(world["eddie"])
    assert eddie.post("/api/keys/", {**body, "kbs": [fin.pk]}, format="json").status_code == 403  # reads only
    assert eddie.post("/api/keys/", {**body, "kbs": [987654]}, format="json").status_code == 404
    assert eddie.post("/api/keys/", {**body, "scope": "write"}, format="json").status_code == 400
    past = (timezone.now() - timedelta(days=1)).isoformat()
    assert eddie.post("/api/keys/", {**body, "expires_at": past}, format="json").status_code == 400
    widget_read = {**body, "scope": "read", "allowed_origins": ["https://intranet.example"]}
    assert eddie.post("/api/keys/", widget_read, format="json").status_code == 400
    bad_origin = {**body, "allowed_origins": ["https://intranet.example/path"]}
    assert eddie.post("/api/keys/", bad_origin, format="json").status_code == 400
    assert ApiKey.objects.count() == 0


def test_a_read_key_retrieves_and_lists_only_its_bases_whatever_its_creator_reads(world):
    key = _api(key=_issue(world, "read"))
    for query in (HR_QUESTION, FIN_QUESTION):
        body = key.post("/api/kb/retrieve/", {"query": query}, format="json")
        assert body.status_code == 200 and FIN_MARKER not in body.content.decode()
    assert HR_MARKER in key.post("/api/kb/retrieve/", {"query": HR_QUESTION}, format="json").content.decode()
    # Eddie himself reads Finance; his key answers it exactly like a base that does not exist.
    assert _api(world["eddie"]).post("/api/kb/retrieve/", {"query": FIN_QUESTION, "kb": [world["fin"].pk]},
                                     format="json").status_code == 200
    assert key.post("/api/kb/retrieve/", {"query": FIN_QUESTION, "kb": [world["fin"].pk]},
                    format="json").status_code == 404
    listed = key.get("/api/kb/documents/").content.decode()
    assert HR_MARKER in listed and FIN_MARKER not in listed
    assert key.get(f"/api/kb/documents/{world['fin_doc'].pk}/").status_code == 404
    assert key.get(f"/api/kb/documents/{world['fin_doc'].pk}/file/").status_code == 404
    assert key.get(f"/api/kb/documents/{world['hr_doc'].pk}/file/").status_code == 200
    assert [kb["name"] for kb in key.get("/api/kbs/").json()] == ["HR"]
    assert key.get(f"/api/kbs/{world['fin'].pk}/").status_code == 404


def test_a_key_never_writes_nor_manages_whatever_its_creator_may(world):
    key = _api(key=_issue(world, "read"))
    hr = world["hr"]
    assert key.delete(f"/api/kb/documents/{world['hr_doc'].pk}/").status_code == 403
    assert key.get(f"/api/kbs/{hr.pk}/grants/").status_code == 403
    assert key.post(f"/api/kbs/{hr.pk}/grants/", {"user": "mia", "access": "edit"}, format="json").status_code == 403
    assert key.post("/api/keys/", {"name": "k", "kbs": [hr.pk], "scope": "read"}, format="json").status_code == 403
    assert key.get("/api/keys/").status_code == 403
    assert key.get("/api/conversations/").status_code == 403
    assert key.post("/api/kbs/", {"name": "new"}, format="json").status_code == 403


def test_an_ask_key_neither_retrieves_nor_lists(world):
    key = _api(key=_issue(world, "ask"))
    assert key.post("/api/kb/retrieve/", {"query": HR_QUESTION}, format="json").status_code == 403
    assert key.get("/api/kb/documents/").status_code == 403
    assert key.get(f"/api/kb/documents/{world['hr_doc'].pk}/file/").status_code == 403
    assert key.get("/api/kbs/").status_code == 403


@pytest.mark.parametrize("spoil", ["revoked", "expired", "wrong_secret", "creator_deactivated", "unknown"])
def test_an_unusable_key_answers_401_like_bad_credentials(world, spoil):
    secret = _issue(world, "read")
    row = ApiKey.objects.get()
    if spoil == "revoked":
        assert keys.key_revoke(user=world["eddie"], key_id=row.pk)
    elif spoil == "expired":
        ApiKey.objects.filter(pk=row.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    elif spoil == "wrong_secret":
        secret = secret[:-4] + ("AAAA" if not secret.endswith("AAAA") else "BBBB")
    elif spoil == "creator_deactivated":
        type(world["eddie"]).objects.filter(pk=world["eddie"].pk).update(is_active=False)
    else:
        secret = "dmk_000000000000_" + "x" * 43
    response = _api(key=secret).post("/api/kb/retrieve/", {"query": HR_QUESTION}, format="json")
    assert response.status_code == 401 and HR_MARKER not in response.content.decode()


def test_revoking_is_for_the_creator_or_an_admin_and_records_last_use(world, admin_user):
    secret = _issue(world, "read")
    row = ApiKey.objects.get()
    assert _api(key=secret).get("/api/kb/documents/").status_code == 200
    row.refresh_from_db()
    assert row.last_used_at is not None
    assert _api(world["mia"]).delete(f"/api/keys/{row.pk}/").status_code == 404
    assert _api(admin_user).get("/api/keys/").json()[0]["id"] == row.pk
    assert _api(world["eddie"]).delete(f"/api/keys/{row.pk}/").status_code == 204
    assert _api(world["eddie"]).get("/api/keys/").json()[0]["revoked"] is True
    assert _api(key=secret).get("/api/kb/documents/").status_code == 401


def test_a_key_loses_what_its_creator_loses(world):
    secret = _issue(world, "read")
    services.kb_revoke(kb=world["hr"], user=world["eddie"])
    body = _api(key=secret).post("/api/kb/retrieve/", {"query": HR_QUESTION}, format="json").content.decode()
    assert HR_MARKER not in body


async def _sse(secret: str, body: dict) -> tuple[int, str]:
    response = await AsyncClient().post("/api/chat/", json.dumps(body), content_type="application/json",
                                        headers={"Authorization": f"Bearer {secret}"})
    if response.streaming:
        return response.status_code, b"".join([c async for c in response.streaming_content]).decode()
    return response.status_code, response.content.decode()


async def test_an_ask_key_chats_over_sse_within_its_bases_only(world):
    secret = await sync_to_async(_issue)(world, "ask")
    status, raw = await _sse(secret, {"message": HR_QUESTION})
    assert status == 200 and HR_MARKER in raw and '"citations"' in raw
    status, raw = await _sse(secret, {"message": FIN_QUESTION})
    assert status == 200 and FIN_MARKER not in raw
    status, raw = await _sse(secret, {"message": FIN_QUESTION, "kb": [world["fin"].pk]})
    assert status == 404 and FIN_MARKER not in raw
    # Reading a document whole is reading the original: an ask key does not.
    status, raw = await _sse(secret, {"message": "总结这个文档", "document_id": world["hr_doc"].pk})
    assert status == 404
    status, _ = await _sse("dmk_000000000000_" + "x" * 43, {"message": HR_QUESTION})
    assert status == 401


@pytest.mark.parametrize(("scope", "opens"), [("ask", False), ("read", True)])
async def test_only_a_read_key_gets_citations_that_link_to_the_reader(world, scope, opens):
    secret = await sync_to_async(_issue)(world, scope)
    status, raw = await _sse(secret, {"message": HR_QUESTION})
    assert status == 200
    payloads = {}
    for block in raw.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if line.startswith(("event: ", "data: ")))
        if lines.get("event") in ("start", "done"):
            payloads[lines["event"]] = json.loads(lines["data"])
    cards = [c for c in [*payloads["start"]["sources"], *payloads["done"]["citations"]] if c["source"] == "KB"]
    assert cards and HR_MARKER in json.dumps(payloads["start"]["sources"], ensure_ascii=False)
    links = {c["reader_url"] for c in cards}
    if opens:
        assert all(link and link.startswith(f"/documents/{world['hr_doc'].pk}/") for link in links)
    else:
        assert links == {None}


async def test_a_key_continues_no_conversation_and_sees_no_memory_of_its_creator(world):
    from chat.models import Conversation
    from memory.services import memory_save
    from memory.types import TYPES, MemoryCandidate

    eddie = world["eddie"]
    mine = await sync_to_async(Conversation.objects.create)(user=eddie, title="private")
    candidate = MemoryCandidate(memory_type=sorted(TYPES)[0], content="我的工号是 PRIVATEMEMO77")
    await sync_to_async(memory_save)(user_id=eddie.pk, candidate=candidate)
    secret = await sync_to_async(_issue)(world, "ask")
    status, _ = await _sse(secret, {"message": HR_QUESTION, "conversation_id": mine.pk})
    assert status == 404
    status, raw = await _sse(secret, {"message": "你记得我的哪些信息？"})
    assert status == 200 and "PRIVATEMEMO77" not in raw
    status, raw = await _sse(secret, {"message": "忘记所有关于我的记忆"})
    assert status == 200
    from memory.selectors import memory_items_from_db

    assert [m.content for m in await sync_to_async(memory_items_from_db)(user_id=eddie.pk)]


MCP_APP = McpMount(get_asgi_application())


def _mcp(secret: str) -> McpClient:
    http = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=MCP_APP), base_url="http://127.0.0.1",
                              headers={"Authorization": f"Bearer {secret}"}, timeout=60)
    return McpClient(streamable_http_client("http://127.0.0.1/mcp/", http_client=http))


async def test_mcp_takes_a_key_within_its_scope(world):
    read_secret = await sync_to_async(_issue)(world, "read")
    ask_secret = await sync_to_async(_issue)(world, "ask")
    async with _mcp(read_secret) as mcp:
        found = await mcp.call_tool("search_kb", {"query": FIN_QUESTION})
        assert not found.is_error and FIN_MARKER not in found.content[0].text
        found = await mcp.call_tool("keyword_search", {"query": HR_MARKER})
        assert HR_MARKER in found.content[0].text
        refused = await mcp.call_tool("keyword_search", {"query": FIN_MARKER, "kb": [world["fin"].pk]})
        assert refused.is_error and FIN_MARKER not in refused.content[0].text
    async with _mcp(ask_secret) as mcp:
        refused = await mcp.call_tool("search_kb", {"query": HR_QUESTION})
        assert refused.is_error and HR_MARKER not in refused.content[0].text
        refused = await mcp.call_tool("list_documents", {})
        assert refused.is_error
        answered = await mcp.call_tool("ask", {"question": HR_QUESTION})
        assert not answered.is_error and HR_MARKER in answered.content[0].text
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=MCP_APP), base_url="http://127.0.0.1") as http:
        response = await http.post("/mcp/", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                                   headers={"Authorization": "Bearer dmk_000000000000_" + "x" * 43,
                                            "Accept": "application/json, text/event-stream"})
        assert response.status_code == 401


def test_the_admin_lists_keys_without_secrets_and_revokes_them(world, admin_user):
    from django.test import Client

    secret = _issue(world, "read")
    browser = Client()
    browser.force_login(admin_user)
    page = browser.get("/admin/apikeys/apikey/").content.decode()
    assert "read key" in page and secret not in page and ApiKey.objects.get().key_hash not in page
    row = ApiKey.objects.get()
    browser.post("/admin/apikeys/apikey/", {"action": "revoke", "_selected_action": [row.pk]})
    row.refresh_from_db()
    assert row.revoked_at is not None


def test_a_key_may_head_wherever_it_may_get_and_nowhere_else(world):
    key = _api(key=_issue(world, "read"))
    hr, fin = world["hr"], world["fin"]
    for path, status in (("/api/kb/documents/", 200), (f"/api/kb/documents/{world['hr_doc'].pk}/", 200),
                         (f"/api/kb/documents/{world['hr_doc'].pk}/file/", 200), (f"/api/kbs/{hr.pk}/", 200),
                         (f"/api/kbs/{fin.pk}/", 404), ("/api/keys/", 403), ("/api/conversations/", 403)):
        assert key.get(path).status_code == status, path
        head = key.head(path)
        body = b"".join(head.streaming_content) if head.streaming else head.content
        assert head.status_code == status and body == b"", path
    ask = _api(key=_issue(world, "ask"))
    assert ask.get("/api/kb/documents/").status_code == ask.head("/api/kb/documents/").status_code == 403
