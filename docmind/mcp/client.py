"""Calls to administrator-registered MCP servers (the SDK's Client), synchronous and bounded.

Every call opens its own connection inside `asyncio.run` on the calling thread (agentic tool
calls run on pool threads that have no event loop), with the server's timeout around the
whole exchange. Credentials are read from the environment by the names the admin stored, and only
from `DOCMIND_MCP_SECRET_*` variables; docmind.mcp.policy is checked before every connection.
"""
from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx2

from docmind.mcp import policy
from docmind.mcp.policy import McpPolicyError


class McpCallFailed(RuntimeError):
    """The server could not be reached, answered with an error, or was too slow."""


@dataclass(frozen=True)
class RemoteServer:
    """A registered server as the loop needs it (a plain copy of the admin row)."""

    name: str
    transport: str  # "http" or "stdio"
    url: str = ""
    command: str = ""
    args: tuple[str, ...] = ()
    header_env: Mapping[str, str] = field(default_factory=dict)
    env_names: tuple[str, ...] = ()
    allowed_tools: tuple[str, ...] = ()
    timeout_seconds: float = 10.0
    result_max_tokens: int = 800
    # tool name → {"timeout_seconds": …, "result_max_tokens": …}, overriding the two above.
    tool_limits: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def timeout_for(self, tool: str) -> float:
        return float(self.tool_limits.get(tool, {}).get("timeout_seconds", self.timeout_seconds))

    def budget_for(self, tool: str) -> int:
        return int(self.tool_limits.get(tool, {}).get("result_max_tokens", self.result_max_tokens))

    @classmethod
    def from_row(cls, row: Any) -> RemoteServer:
        return cls(name=row.name, transport=row.transport, url=row.url, command=row.command, args=tuple(row.args),
                   header_env=dict(row.header_env), env_names=tuple(row.env_names),
                   allowed_tools=tuple(row.allowed_tools), timeout_seconds=float(row.timeout_seconds),
                   result_max_tokens=int(row.result_max_tokens), tool_limits=dict(row.tool_limits or {}))


@dataclass(frozen=True)
class RemoteTool:
    name: str
    description: str
    input_schema: Mapping[str, Any]


@dataclass(frozen=True)
class RemoteResult:
    text: str
    is_error: bool
    omitted: int = 0  # non-text content blocks (images, resources) that were left out


class McpConnector:
    """list_tools / call_tool against one server; every failure is McpCallFailed."""

    def __init__(self, server: RemoteServer) -> None:
        self.server = server

    def list_tools(self) -> list[RemoteTool]:
        async def go(client: Any) -> list[RemoteTool]:
            listed = await client.list_tools()
            return [RemoteTool(name=t.name, description=t.description or "", input_schema=dict(t.input_schema or {}))
                    for t in listed.tools]
        return self._run(go, self.server.timeout_seconds)

    def call_tool(self, name: str, arguments: dict[str, Any]) -> RemoteResult:
        async def go(client: Any) -> RemoteResult:
            result = await client.call_tool(name, arguments)
            texts, omitted = [], 0
            for block in result.content:
                if getattr(block, "type", "") == "text":
                    texts.append(block.text)
                else:
                    omitted += 1
            if not texts and result.structured_content is not None:
                texts.append(str(result.structured_content))
            return RemoteResult(text="\n".join(texts), is_error=bool(result.is_error), omitted=omitted)
        return self._run(go, self.server.timeout_for(name))

    def _run(self, body: Any, timeout: float) -> Any:
        try:
            self._check()
        except McpPolicyError as exc:
            raise McpCallFailed(f"refused: {exc}") from None

        async def main() -> Any:
            with anyio.fail_after(timeout):
                async with self._client() as client:
                    return await body(client)
        try:
            return asyncio.run(main())
        except TimeoutError:
            raise McpCallFailed(f"timed out after {timeout:g} s") from None
        except McpCallFailed:
            raise
        except BaseException as exc:  # noqa: BLE001 - task groups wrap transport errors in groups
            if isinstance(exc, KeyboardInterrupt | SystemExit):
                raise
            raise McpCallFailed(_describe(exc)) from None

    def _check(self) -> None:
        server = self.server
        if server.transport == "stdio":
            policy.check_stdio()
            policy.check_secret_names(header_env={}, env_names=server.env_names)
        else:
            policy.check_secret_names(header_env=server.header_env, env_names=())
            policy.check_url_resolved(server.url)

    def _client(self) -> Any:
        # heavy: the MCP SDK (about 1 s) loads with the first connection to an external server
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import get_default_environment
        from mcp.client.streamable_http import streamable_http_client

        server = self.server
        if server.transport == "stdio":
            # The SDK's minimal environment (PATH, HOME, USER…) plus the named secrets: never the service's own.
            env = {**get_default_environment(), **_env_values(server.env_names)}
            return Client(StdioServerParameters(command=server.command, args=list(server.args), env=env))
        headers = {header: os.environ.get(var, "") for header, var in server.header_env.items()}
        # The SDK documents passing our own client for headers; these are its default timeouts (a server may
        # hold the response stream open), and the call's own deadline above bounds the whole exchange.
        http = httpx2.AsyncClient(headers={k: v for k, v in headers.items() if v},
                                  timeout=httpx2.Timeout(30.0, read=300.0))
        return Client(streamable_http_client(server.url, http_client=http))


def _env_values(names: Sequence[str]) -> dict[str, str]:
    return {name: os.environ[name] for name in names if name in os.environ}


def _describe(exc: BaseException) -> str:
    """The innermost cause, without URLs' credentials or the server's full text."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {str(exc)[:200]}"
