"""stdio ↔ a running DocMind's `/mcp/`: what `manage.py mcp_stdio` does when it is given the server's URL.

A local MCP client (Claude Desktop, an IDE) speaks MCP over stdin/stdout; the server that owns the
indexes (a Milvus Lite file opens in one process only) speaks it over Streamable HTTP. The relay
moves each JSON-RPC message across unchanged, one HTTP POST per message with the API token, and
answers a request the server could not take (unreachable, refused token) with a JSON-RPC error
that says what to fix, so the client shows a reason instead of hanging.
"""
from __future__ import annotations

import json
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import INTERNAL_ERROR

ACCEPT = "application/json, text/event-stream"
PROTOCOL_HEADER = "MCP-Protocol-Version"


class _Session:
    """What the relay learns from the handshake: the protocol version every later POST names."""

    def __init__(self) -> None:
        self.protocol_version: str | None = None


async def relay(*, url: str, token: str, http: httpx2.AsyncClient, stdin: Any = None, stdout: Any = None) -> None:
    """Relay until stdin ends and every request in flight has its answer (requests run concurrently:
    a long `ask` does not hold up a `tools/list`)."""
    session = _Session()
    async with stdio_server(stdin, stdout) as (incoming, outgoing):
        async with outgoing, anyio.create_task_group() as tasks:  # closing `outgoing` ends the stdout writer
            async for item in incoming:
                if isinstance(item, Exception):
                    continue  # a line that is not JSON-RPC: nothing to answer (it has no id)
                tasks.start_soon(_forward, item.message, url, token, http, outgoing, session)


async def _forward(message: Any, url: str, token: str, http: httpx2.AsyncClient, outgoing: Any,
                   session: _Session) -> None:
    request_id = getattr(message, "id", None) if isinstance(message, types.JSONRPCRequest) else None
    headers = {"Authorization": f"Token {token}", "Accept": ACCEPT, "Content-Type": "application/json"}
    if session.protocol_version:
        headers[PROTOCOL_HEADER] = session.protocol_version
    body = message.model_dump_json(by_alias=True, exclude_unset=True)
    try:
        response = await http.post(url, content=body, headers=headers)
    except httpx2.HTTPError as exc:
        await _fail(outgoing, request_id, f"DocMind's MCP endpoint {url} cannot be reached "
                                          f"({type(exc).__name__}): is the server running at that address?")
        return
    replies = _replies(response)
    if not replies and request_id is not None:
        await _fail(outgoing, request_id, _refusal(response, url))
        return
    for reply in replies:
        if isinstance(reply, types.JSONRPCResponse) and isinstance(reply.result, dict):
            version = reply.result.get("protocolVersion")
            if isinstance(version, str) and getattr(message, "method", "") == "initialize":
                session.protocol_version = version
        await outgoing.send(SessionMessage(reply))


def _replies(response: httpx2.Response) -> list[Any]:
    """The JSON-RPC messages in a JSON or an SSE answer (none for 202 Accepted or a non-MCP body)."""
    kind = response.headers.get("content-type", "").split(";")[0].strip()
    texts: list[str] = []
    if kind == "application/json":
        texts = [response.text]
    elif kind == "text/event-stream":
        texts = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
    replies = []
    for text in texts:
        try:
            replies.append(types.jsonrpc_message_adapter.validate_json(text, by_name=False))
        except ValueError:
            continue
    return replies


def _refusal(response: httpx2.Response, url: str) -> str:
    detail = ""
    try:
        detail = str(json.loads(response.text).get("error", ""))
    except (ValueError, AttributeError):
        pass
    if response.status_code == 401:
        return f"DocMind refused the token in DOCMIND_MCP_TOKEN ({detail or 'HTTP 401'})"
    return f"DocMind's MCP endpoint {url} answered HTTP {response.status_code}" + (f": {detail}" if detail else "")


async def _fail(outgoing: Any, request_id: Any, text: str) -> None:
    if request_id is None:
        return  # a notification has no answer to carry the error
    error = types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=INTERNAL_ERROR, message=text))
    await outgoing.send(SessionMessage(error))
