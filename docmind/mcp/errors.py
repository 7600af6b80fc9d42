"""What an MCP client reads when a call fails: plain English sentences (or the language it asks for), never
a pydantic dump or a Python repr, and the JSON-RPC error the spec prescribes for an unknown tool."""
from __future__ import annotations

import json
from typing import Any

from django.utils import translation
from django.utils.translation.trans_real import parse_accept_lang_header
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from pydantic import ValidationError

DEFAULT_LANGUAGE = "en"


def unknown_tool(name: str) -> MCPError:
    """The spec's answer to a call of a tool the server does not have: JSON-RPC -32602, not a tool result."""
    return MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {name}", data={"tool": name})


def client_language(accept_language: str) -> str:
    """The supported language the client asks for in Accept-Language, else English: an API client that
    says nothing is better served by English than by the web UI's default language."""
    for code, _quality in parse_accept_lang_header(accept_language or ""):
        if code == "*":
            break
        try:
            return translation.get_supported_language_variant(code)
        except LookupError:
            continue
    return DEFAULT_LANGUAGE


def crash_text(tool: str) -> str:
    """What a caller reads when a tool failed inside the server: whose fault it is and what to do."""
    return (f"Tool {tool} failed with an internal server error (details are in the DocMind server log); "
            "the arguments were accepted, so retrying later or reporting it to the administrator may help")


def arguments_text(tool: str, exc: ValidationError) -> str:
    """One line per rejected argument: where it is, what was wrong, and the offending value when it is
    a short scalar (the id in `kb: [1, 0]`), so the caller can correct the exact item."""
    problems = []
    for error in exc.errors(include_url=False):
        where = _location(error.get("loc", ()))
        message = str(error.get("msg", "is invalid"))
        value = error.get("input")
        got = f" (got {json.dumps(value)})" if _short_scalar(value) and error.get("type") != "missing" else ""
        problems.append(f"{where}: {message}{got}" if where else f"{message}{got}")
    return f"Invalid arguments for tool {tool}: " + "; ".join(problems)


def _location(loc: Any) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _short_scalar(value: Any) -> bool:
    if isinstance(value, bool) or value is None or isinstance(value, int | float):
        return True
    return isinstance(value, str) and len(value) <= 40
