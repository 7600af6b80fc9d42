"""External MCP tools as agentic-loop tools: allowlisted, time-boxed, budgeted, and always data.

A remote tool's result is fenced and labelled as untrusted data, cut to the server's result
budget, and kept as WEB-like evidence (cited by its mcp:// address). It is never executed and
cannot reach the system prompt: the planner prompt names external tools with our own fixed
text, never the server's description. A server that fails or is slow is dropped for the rest
of the turn (and its tool listing for a short while) with a note in the trace.
"""
from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from chat.agentic.tools import ToolContext, ToolSpec
from chat.agentic.types import ToolOutcome
from docmind.fences import EXTERNAL_DATA, fenced
from docmind.mcp.client import McpCallFailed, McpConnector, RemoteServer, RemoteTool
from docmind.prompts import tool_results as texts
from docmind.prompts.agentic import external_tool_description
from docmind.telemetry import add_event
from docmind.tokens import estimate_tokens, truncate_to_tokens
from kb.retrieval.types import ScoredChunk, Source

LISTING_TTL_SECONDS = 60.0
# A server that could not list its tools is not asked again for this long (each try costs its timeout).
FAILURE_TTL_SECONDS = 30.0
DESCRIPTION_CHARS = 300
FENCE_OPEN, FENCE_CLOSE = f"<{EXTERNAL_DATA}>", f"</{EXTERNAL_DATA}>"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")

ConnectorFactory = Callable[[RemoteServer], McpConnector]
_listings: dict[str, tuple[float, list[RemoteTool] | str]] = {}
_listings_lock = threading.Lock()


@dataclass
class _ServerHealth:
    """Per turn: after one failure the server's other tools answer "unavailable" at once."""

    down: str = ""


def exposed_name(server: str, tool: str) -> str:
    return f"mcp_{server}_{_UNSAFE.sub('_', tool)}"[:64]


def external_tools(servers: Sequence[RemoteServer], *,
                   connector_factory: ConnectorFactory = McpConnector) -> tuple[list[ToolSpec], list[str]]:
    """The allowlisted tools of every reachable server, and trace notes about what was left out."""
    specs: list[ToolSpec] = []
    notes: list[str] = []
    taken: set[str] = set()
    for server in servers:
        connector = connector_factory(server)
        listed = _listing(server, connector)
        if isinstance(listed, str):
            notes.append(f"mcp {server.name}: unavailable ({listed}); its tools are not offered")
            continue
        by_name = {t.name: t for t in listed}
        health = _ServerHealth()
        for tool_name in server.allowed_tools:
            tool = by_name.get(tool_name)
            name = exposed_name(server.name, tool_name)
            if tool is None:
                notes.append(f"mcp {server.name}: allowlisted tool {tool_name!r} is not offered by the server")
                continue
            if name in taken:
                continue
            taken.add(name)
            specs.append(_spec(server, tool, name, connector, health))
        ignored = len(set(by_name) - set(server.allowed_tools))
        if ignored:
            notes.append(f"mcp {server.name}: {ignored} tool(s) not on the allowlist ignored")
    return specs, notes


def forget_listings() -> None:
    with _listings_lock:
        _listings.clear()


def _listing(server: RemoteServer, connector: McpConnector) -> list[RemoteTool] | str:
    now = time.monotonic()
    key = repr(server)  # every setting is in it: an edited row is a new entry
    with _listings_lock:
        cached = _listings.get(key)
    if cached is not None and cached[0] > now:
        return cached[1]
    try:
        value: list[RemoteTool] | str = connector.list_tools()
        ttl = LISTING_TTL_SECONDS
    except McpCallFailed as exc:
        value, ttl = str(exc), FAILURE_TTL_SECONDS
    with _listings_lock:
        _listings[key] = (now + ttl, value)
    return value


def _parameters(schema: dict[str, Any]) -> dict[str, Any]:
    """The remote input schema as the loop's argument check understands it (an object of properties)."""
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = [r for r in schema.get("required", []) if isinstance(r, str) and r in props]
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


def _spec(server: RemoteServer, tool: RemoteTool, name: str, connector: McpConnector,
          health: _ServerHealth) -> ToolSpec:
    description = external_tool_description(server=server.name, tool=tool.name,
                                            description=" ".join(tool.description.split())[:DESCRIPTION_CHARS])

    def run(ctx: ToolContext, args: dict[str, Any]) -> ToolOutcome:
        if health.down:
            return ToolOutcome(text=texts.external_unavailable(name, health.down),
                               error=f"mcp server unavailable: {health.down}")
        try:
            result = connector.call_tool(tool.name, args)
        except McpCallFailed as exc:
            health.down = str(exc)
            add_event("mcp.server_dropped", {"docmind.mcp.server": server.name, "docmind.mcp.reason": str(exc)})
            return ToolOutcome(text=texts.external_failed(name, str(exc)), error=f"mcp: {exc}")
        text, cut = _budgeted(result.text, server.budget_for(tool.name))
        note = texts.external_note(cut=cut, omitted=result.omitted)
        if result.is_error:
            return ToolOutcome(text=f"{texts.external_error_header(tool=name, note=note)}\n{_fenced(text)}",
                               error="mcp tool error")
        chunk = ScoredChunk(chunk_id=_chunk_id(server.name, tool.name, args, text), content=text, score=0.0,
                            source=Source.WEB, document_title=f"{server.name} · {tool.name}",
                            url=f"mcp://{server.name}/{tool.name}#{_digest(args)}")
        return ToolOutcome(text=f"{texts.external_result_header(tool=name, note=note)}\n{_fenced(text)}",
                           chunks=(chunk,) if text.strip() else ())

    return ToolSpec(name=name, description=description, parameters=_parameters(dict(tool.input_schema)), run=run,
                    external=True)


def _budgeted(text: str, max_tokens: int) -> tuple[str, bool]:
    if estimate_tokens(text) <= max_tokens:
        return text, False
    return truncate_to_tokens(text, max_tokens), True


def _fenced(text: str) -> str:
    # The data cannot close its own fence (in any spelling) and pose as our text after it.
    return fenced(text, EXTERNAL_DATA)


def _digest(args: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(args, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:12]


def _chunk_id(server: str, tool: str, args: dict[str, Any], text: str) -> str:
    return "mcp:" + hashlib.sha256(f"{server}/{tool}/{_digest(args)}/{text}".encode()).hexdigest()[:24]
