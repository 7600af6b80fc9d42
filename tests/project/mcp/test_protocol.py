"""What a third-party MCP client meets at the edges: the spec's errors, readable messages, schemas that state
the server's limits, and no hanging stream on GET."""
from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from mcp.shared.exceptions import MCPError

from tests.chat.chat_helpers import HANDBOOK_TITLE, ingest_tiny_kb
from tests.project.mcp.test_server import _client, _http, _token

pytestmark = pytest.mark.django_db(transaction=True)



@pytest.fixture
def kb():
    return ingest_tiny_kb()


JSON_RPC_HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}


async def test_an_unknown_tool_is_a_json_rpc_invalid_params_error(member):
    token = await _token(member)
    async with _client(token) as mcp:
        with pytest.raises(MCPError) as raised:
            await mcp.call_tool("no_such_tool", {})
    assert raised.value.code == -32602
    assert raised.value.message == "Unknown tool: no_such_tool"
    async with _http(token) as http:
        response = await http.post("/mcp/", headers=JSON_RPC_HEADERS, json={
            "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "no_such_tool", "arguments": {}}})
    body = response.json()
    assert "result" not in body
    assert body["id"] == 3 and body["error"]["code"] == -32602


async def test_a_bad_knowledge_base_id_is_named_in_a_plain_message(member):
    async with _client(await _token(member)) as mcp:
        zero = await mcp.call_tool("search_kb", {"query": "年假", "kb": [1, 0]})
        unreadable = await mcp.call_tool("keyword_search", {"query": "年假", "kb": [987654]})
        wrong_type = await mcp.call_tool("read_section", {"document_id": "first"})
    assert zero.is_error and unreadable.is_error and wrong_type.is_error
    text = zero.content[0].text
    assert "kb[1]" in text and "(got 0)" in text and text.startswith("Invalid arguments for tool search_kb")
    assert "no such knowledge base: 987654" in unreadable.content[0].text
    for message in (text, wrong_type.content[0].text):
        # No pydantic dump: no model names, error types, input reprs or documentation links.
        assert "validation error for" not in message and "type=" not in message
        assert "input_value" not in message and "pydantic.dev" not in message
    assert "document_id" in wrong_type.content[0].text


async def test_errors_are_english_unless_the_client_asks_for_another_language(member):
    question = "年" * 4001  # over chat.max_message_chars: the pipeline's own (translated) refusal
    token = await _token(member)
    async with _client(token) as mcp:
        plain = await mcp.call_tool("ask", {"question": question})
    chinese_http = _http(token)
    chinese_http.headers["Accept-Language"] = "zh-CN,zh;q=0.9"
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with Client(streamable_http_client("http://127.0.0.1/mcp/", http_client=chinese_http)) as mcp:
        chinese = await mcp.call_tool("ask", {"question": question})
    assert plain.is_error and "The question is too long" in plain.content[0].text
    assert chinese.is_error and "问题太长了" in chinese.content[0].text


async def test_input_schemas_state_the_bounds_the_tools_enforce(member):
    from config_admin.conf import ai_config

    snapshot = await sync_to_async(ai_config.snapshot)()
    async with _client(await _token(member)) as mcp:
        schemas = {t.name: t.input_schema["properties"] for t in (await mcp.list_tools()).tools}
    from kb.retrieval.api import MAX_TOP_K

    assert schemas["search_kb"]["query"]["maxLength"] == snapshot["retrieval.query_max_chars"]
    assert schemas["keyword_search"]["query"]["maxLength"] == snapshot["retrieval.query_max_chars"]
    assert schemas["ask"]["question"]["maxLength"] == snapshot["chat.max_message_chars"]
    assert schemas["search_kb"]["query"]["minLength"] == 1
    assert {"minimum": 1, "maximum": MAX_TOP_K}.items() <= schemas["keyword_search"]["top_k"].items()
    search_top_k = next(s for s in schemas["search_kb"]["top_k"]["anyOf"] if s.get("type") == "integer")
    assert (search_top_k["minimum"], search_top_k["maximum"]) == (1, MAX_TOP_K)
    kb_list = next(s for s in schemas["search_kb"]["kb"]["anyOf"] if s.get("type") == "array")
    assert kb_list["minItems"] == 1 and kb_list["items"]["minimum"] == 1
    assert schemas["read_section"]["section"]["minimum"] == 1
    status = next(s for s in schemas["list_documents"]["status"]["anyOf"] if s.get("type") == "string")
    assert set(status["enum"]) == {"ready", "pending", "processing", "failed"}


async def test_a_query_over_the_schemas_limit_is_refused_by_keyword_search_too(member):
    async with _client(await _token(member)) as mcp:
        refused = await mcp.call_tool("keyword_search", {"query": "x" * 2001})
    assert refused.is_error and "the limit is 2000" in refused.content[0].text


@pytest.mark.parametrize("method", ["GET", "DELETE"])
async def test_a_stateless_endpoint_answers_get_and_delete_with_405(method, member):
    async with _http(await _token(member)) as http:
        response = await http.request(method, "/mcp/", headers={"Accept": "text/event-stream"})
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"


def _lines(*messages: dict) -> str:
    import json

    return "".join(json.dumps(m) + "\n" for m in messages)


async def _relayed(token: str, *messages: dict) -> dict:
    """`manage.py mcp_stdio` with DOCMIND_MCP_URL: stdin lines relayed to the server's /mcp/, answers by id."""
    import io
    import json

    import anyio

    from docmind.mcp.relay import relay

    stdout = io.StringIO()
    async with _http(None) as http:  # the relay sends the token itself
        await relay(url="http://127.0.0.1/mcp/", token=token, http=http,
                    stdin=anyio.wrap_file(io.StringIO(_lines(*messages))), stdout=anyio.wrap_file(stdout))
    answers = [json.loads(line) for line in stdout.getvalue().splitlines() if line.strip()]
    return {a["id"]: a for a in answers}


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "stdio-client", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


async def test_mcp_stdio_relays_to_the_running_servers_endpoint(member, kb):
    token = await _token(member)
    answers = await _relayed(token, INITIALIZE, INITIALIZED,
                             {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                             {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                              "params": {"name": "list_documents", "arguments": {}}},
                             {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                              "params": {"name": "nope", "arguments": {}}})
    assert answers[1]["result"]["serverInfo"]["name"] == "docmind"
    assert "search_kb" in {t["name"] for t in answers[2]["result"]["tools"]}
    documents = answers[3]["result"]["structuredContent"]["documents"]
    assert HANDBOOK_TITLE in {d["title"] for d in documents}
    assert answers[4]["error"]["code"] == -32602


async def test_mcp_stdio_relay_answers_a_refused_token_with_a_reason(member):
    answers = await _relayed("not-a-real-token", INITIALIZE)
    assert answers[1]["error"]["message"].startswith("DocMind refused the token in DOCMIND_MCP_TOKEN")


def test_mcp_stdio_without_a_url_explains_a_held_milvus_lite_file(monkeypatch):
    from django.core.management.base import CommandError

    from docmind.indexes import stores
    from docmind.indexes.vectorstore import VectorStoreError
    from project.management.commands.mcp_stdio import open_indexes_or_explain

    def held():
        raise VectorStoreError("cannot open the vector store at data/milvus.db: locked — a Milvus Lite file can be "
                               "opened by one process only")

    monkeypatch.setattr(stores, "get_vector_store", held)
    with pytest.raises(CommandError, match="DOCMIND_MCP_URL=http://127.0.0.1:8000/mcp/"):
        open_indexes_or_explain()


async def test_a_crashing_tool_says_it_was_the_servers_fault(member):
    from mcp import Client

    from project.mcp.server import build_server, set_stdio_user

    server = build_server()

    @server.tool()
    def broken() -> str:
        raise RuntimeError("secret internal detail /srv/docmind/settings.py")

    set_stdio_user(member.pk)
    async with Client(server) as mcp:
        result = await mcp.call_tool("broken", {})
    text = result.content[0].text
    assert result.is_error and "internal server error" in text and "broken" in text
    assert "secret" not in text and "RuntimeError" not in text
