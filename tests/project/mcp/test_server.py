"""DocMind's MCP server driven by the MCP SDK's own client over Streamable HTTP through the ASGI app."""
from __future__ import annotations

import json

import httpx2
import pytest
from asgiref.sync import sync_to_async
from django.core.asgi import get_asgi_application
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from rest_framework.authtoken.models import Token

from chat.models import Conversation
from project.mcp.asgi import McpMount
from tests.chat.chat_helpers import HANDBOOK_TITLE, QUESTION, ingest_tiny_kb

# Transactional: tool calls run on worker threads with their own connections. No serialized rollback:
# the user fixtures seed what the tests need, and a flush by an earlier transactional test would
# make restoring the serialized content types collide.
pytestmark = pytest.mark.django_db(transaction=True)

APP = McpMount(get_asgi_application())
TOOLS = {"search_kb", "keyword_search", "list_documents", "list_knowledge_bases", "list_domains", "read_section",
         "ask"}


@pytest.fixture
def kb():
    return ingest_tiny_kb()


def _http(token: str | None) -> httpx2.AsyncClient:
    headers = {"Authorization": f"Token {token}"} if token else {}
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app=APP), base_url="http://127.0.0.1",
                              headers=headers, timeout=60)


def _client(token: str | None) -> Client:
    return Client(streamable_http_client("http://127.0.0.1/mcp/", http_client=_http(token)))


async def _token(user) -> str:
    return (await sync_to_async(Token.objects.create)(user=user)).key


def _data(result) -> dict:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


async def test_it_lists_only_read_tools_and_searches_like_the_rest_api(member, kb):
    from django.test import Client as DjangoClient  # the REST answer for the same query, same user

    async with _client(await _token(member)) as mcp:
        listed = {t.name: t for t in (await mcp.list_tools()).tools}
        assert set(listed) == TOOLS
        assert all(t.annotations.read_only_hint for t in listed.values())
        found = _data(await mcp.call_tool("search_kb", {"query": QUESTION, "top_k": 3}))

    rest = DjangoClient()
    await sync_to_async(rest.force_login)(member)
    expected = (await sync_to_async(rest.post)("/api/kb/retrieve/", {"query": QUESTION, "top_k": 3},
                                               content_type="application/json")).json()
    assert [c["chunk_id"] for c in found["chunks"]] == [c["chunk_id"] for c in expected["chunks"]]
    assert found["chunks"][0]["document_title"] == HANDBOOK_TITLE
    assert found["grade"]["grade"] == expected["grade"]["grade"]


def _ingest_code_page() -> str:
    """A page with a code no other test uses: the shared test index keeps entries of flushed tests."""
    import uuid

    from kb.ingestion.worker import process_pending_documents
    from kb.services import document_ingest_text

    code = f"ERR{uuid.uuid4().hex[:8].upper()}"
    document_ingest_text(title="错误码手册", text=f"错误码 {code} 表示支付网关超时，请稍后重试。", domain="demo")
    process_pending_documents()
    return code


async def test_documents_sections_and_keyword_search_are_readable(member, kb):
    code = await sync_to_async(_ingest_code_page)()
    async with _client(await _token(member)) as mcp:
        documents = _data(await mcp.call_tool("list_documents", {}))["documents"]
        handbook = next(d for d in documents if d["title"] == HANDBOOK_TITLE)
        section = _data(await mcp.call_tool("read_section", {"document_id": handbook["id"], "section": 1}))
        keyword = _data(await mcp.call_tool("keyword_search", {"query": code, "top_k": 2}))
        bad = await mcp.call_tool("read_section", {"document_id": handbook["id"], "section": 99})
        empty = await mcp.call_tool("search_kb", {"query": "   "})
    assert section["sections"] >= 1 and "年假" in section["content"]
    assert keyword["chunks"] and code in keyword["chunks"][0]["content"]
    assert bad.is_error and "section must be between" in bad.content[0].text
    assert empty.is_error and "query" in empty.content[0].text


def _ingest_into_new_kbs(member) -> dict[str, tuple[int, str]]:
    """Two more bases, one readable by `member` and one not, each with a page holding its own code."""
    import uuid

    from kb.ingestion.worker import process_pending_documents
    from kb.services import document_ingest_text, kb_create, kb_grant

    made = {}
    for name, readable in (("研发", True), ("财务", False)):
        base = kb_create(name=f"{name}-{uuid.uuid4().hex[:6]}")
        if readable:
            kb_grant(kb=base, access="read", user=member)
        code = f"K{uuid.uuid4().hex[:8].upper()}"
        document_ingest_text(title=f"{name}代码表", text=f"代码 {code} 属于{name}部门的系统。", domain="demo", kb=base)
        made[name] = (base.pk, code)
    process_pending_documents()
    return made


async def test_a_caller_narrows_to_its_readable_bases_and_never_reaches_another(member, kb):
    made = await sync_to_async(_ingest_into_new_kbs)(member)
    (own, own_code), (other, other_code) = made["研发"], made["财务"]
    async with _client(await _token(member)) as mcp:
        bases = _data(await mcp.call_tool("list_knowledge_bases", {}))["knowledge_bases"]
        narrowed = _data(await mcp.call_tool("keyword_search", {"query": own_code, "kb": [own]}))
        elsewhere = _data(await mcp.call_tool("search_kb", {"query": QUESTION, "kb": [own]}))
        documents = _data(await mcp.call_tool("list_documents", {"kb": [own]}))["documents"]
        hidden = _data(await mcp.call_tool("keyword_search", {"query": other_code}))
        refused = [await mcp.call_tool(tool, {"query": other_code, "kb": [other]})
                   for tool in ("search_kb", "keyword_search")]
        refused.append(await mcp.call_tool("ask", {"question": other_code, "kb": [other]}))
    assert own in {b["id"] for b in bases} and other not in {b["id"] for b in bases}
    assert narrowed["chunks"] and own_code in narrowed["chunks"][0]["content"]
    assert all(c["document_title"] != HANDBOOK_TITLE for c in elsewhere["chunks"])
    assert [d["kb"] for d in documents] == [own]
    assert all(other_code not in c["content"] for c in hidden["chunks"])
    assert all(r.is_error and "no such knowledge base" in r.content[0].text.lower() for r in refused)


async def test_ask_answers_with_citations_as_the_calling_user(member, admin_user, kb):
    async with _client(await _token(member)) as mcp:
        answered = _data(await mcp.call_tool("ask", {"question": QUESTION}))
    async with _client(await _token(admin_user)) as mcp:
        by_admin = _data(await mcp.call_tool("ask", {"question": QUESTION}))
    assert "[1]" in answered["answer"] and answered["citations"]
    assert answered["confidence_band"] and answered["confidence_score"] is not None
    owners = await sync_to_async(lambda: {c.pk: c.user_id for c in Conversation.objects.all()})()
    assert owners[answered["conversation_id"]] == member.pk
    assert owners[by_admin["conversation_id"]] == admin_user.pk


@pytest.mark.parametrize("token", [None, "not-a-real-token"])
async def test_a_missing_or_bad_token_is_refused_before_any_mcp_message(token, member):
    async with _http(token) as http:
        response = await http.post("/mcp/", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                                   headers={"Accept": "application/json, text/event-stream"})
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Token"


async def test_the_sdk_client_cannot_connect_with_a_bad_token():
    with pytest.raises(Exception):  # noqa: B017 - the SDK surfaces the 401 as its own error type
        async with _client("wrong") as mcp:
            await mcp.list_tools()


async def test_an_inactive_users_token_is_refused(member):
    key = await _token(member)
    member.is_active = False
    await sync_to_async(member.save)()
    async with _http(key) as http:
        response = await http.post("/mcp/", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert response.status_code == 401


async def test_other_paths_still_reach_django():
    async with _http(None) as http:
        response = await http.get("/healthz")
    assert response.status_code in (200, 503)


async def test_over_stdio_the_token_users_session_reaches_the_same_tools(member, kb):
    """The in-process form of `manage.py mcp_stdio`: the server runs as the token's user."""
    from django.core.management.base import CommandError

    from project.management.commands.mcp_stdio import user_for_token
    from project.mcp.server import build_server, set_stdio_user

    with pytest.raises(CommandError, match="DOCMIND_MCP_TOKEN"):
        await sync_to_async(user_for_token)("")
    with pytest.raises(CommandError, match="DOCMIND_MCP_TOKEN: "):
        await sync_to_async(user_for_token)("nope")
    set_stdio_user(await sync_to_async(user_for_token)(await _token(member)))
    async with Client(build_server()) as mcp:
        documents = _data(await mcp.call_tool("list_documents", {}))["documents"]
    assert HANDBOOK_TITLE in {d["title"] for d in documents}


async def test_a_body_over_the_limit_is_a_json_413_before_the_sdk_reads_it(member):
    async with _http(await _token(member)) as http:
        response = await http.post("/mcp/", content=b'{"jsonrpc": "2.0", "id": 1, "method": "' + b"x" * (6 << 20)
                                   + b'"}', headers={"Content-Type": "application/json",
                                                     "Accept": "application/json, text/event-stream"})
    assert response.status_code == 413
    assert response.json()["code"] == "body_too_large"


async def test_a_deeply_nested_body_is_a_client_error_not_a_crash(member):
    async with _http(await _token(member)) as http:
        response = await http.post("/mcp/", content=b"[" * 100_000 + b"]" * 100_000,
                                   headers={"Content-Type": "application/json",
                                            "Accept": "application/json, text/event-stream"})
    assert 400 <= response.status_code < 500
