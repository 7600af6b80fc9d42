"""The loop's tools: each a JSON schema plus a small function; the offered list is filtered, never extended."""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from chat.agentic.search import DocSearch
from chat.agentic.tracker import RetrievedDocTracker
from chat.agentic.types import ToolOutcome
from docmind.fences import DOCUMENT_DATA, fenced
from docmind.prompts import tool_results as texts
from docmind.prompts.agentic import CODE_ARGUMENT, DOMAIN_ARGUMENT, QUERY_ARGUMENT, TOOL_DESCRIPTIONS
from docmind.sandbox import PythonSandbox
from docmind.tokens import estimate_tokens, truncate_to_tokens
from docmind.websearch import WebSearch
from kb.retrieval.types import ScoredChunk

SNIPPET_CHARS = 280
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class ToolContext:
    """Everything a tool function may use during one chat turn."""

    session_id: str
    tracker: RetrievedDocTracker
    docs: DocSearch
    web: WebSearch | None = None
    sandbox: PythonSandbox | None = None
    k: int = 6
    result_max_tokens: int = 900
    # The turn's user's long-term memories for a query (bound to that user; None when memory is off).
    memory: Callable[[str], list[str]] | None = None


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: Mapping[str, Any]
    run: Callable[[ToolContext, dict[str, Any]], ToolOutcome]
    # A tool of an external MCP server: its own description never enters the system prompt.
    external: bool = False

    def schema(self) -> dict[str, Any]:
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": dict(self.parameters)}}


def _params(required: Sequence[str], **props: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": dict(props), "required": list(required), "additionalProperties": False}


_QUERY = {"type": "string", "description": QUERY_ARGUMENT}
_DOMAIN = {"type": "string", "description": DOMAIN_ARGUMENT}


def search_docs(ctx: ToolContext, args: dict[str, Any]) -> ToolOutcome:
    domains = [args["domain"]] if args.get("domain") else None
    return _kb_outcome(ctx, "searchDocs", ctx.docs.hybrid(args["query"], k=ctx.k, domains=domains))


def keyword_search(ctx: ToolContext, args: dict[str, Any]) -> ToolOutcome:
    domains = [args["domain"]] if args.get("domain") else None
    return _kb_outcome(ctx, "keywordSearch", ctx.docs.lexical(args["query"], k=ctx.k, domains=domains))


def web_search(ctx: ToolContext, args: dict[str, Any]) -> ToolOutcome:
    if ctx.web is None:
        return ToolOutcome(text=texts.unavailable("webSearch"), error="web search is not configured")
    try:
        hits = ctx.web.search(args["query"], k=ctx.k)
    except Exception as exc:  # the web is optional: the model may go on with the knowledge base
        return ToolOutcome(text=texts.web_search_failed(exc.__class__.__name__), error=str(exc), used_web=True)
    return _kb_outcome(ctx, "webSearch", hits, used_web=True)


def recall_memory(ctx: ToolContext, args: dict[str, Any]) -> ToolOutcome:
    if ctx.memory is None:
        return ToolOutcome(text=texts.unavailable("recall_memory"), error="memory is disabled")
    try:
        lines = ctx.memory(args["query"])
    except Exception as exc:  # memory is an aid: the loop goes on with the knowledge base
        return ToolOutcome(text=texts.recall_memory_failed(exc.__class__.__name__), error=str(exc))
    if not lines:
        return ToolOutcome(text=texts.NO_MEMORIES)
    return ToolOutcome(text=truncate_to_tokens(texts.memories(lines), ctx.result_max_tokens))


def execute_code(ctx: ToolContext, args: dict[str, Any]) -> ToolOutcome:
    if ctx.sandbox is None:
        return ToolOutcome(text=texts.unavailable("executeCode"), error="sandbox is disabled")
    result = ctx.sandbox.run(code=args["code"])
    status = texts.code_status(timed_out=result.timed_out, exit_code=result.exit_code)
    body = texts.code_output(status=status, stdout=result.stdout, stderr=result.stderr)
    text = truncate_to_tokens(body, ctx.result_max_tokens, code_like=True)
    if text != body:
        text += texts.CODE_OUTPUT_CUT
    return ToolOutcome(text=text, computation={"code": args["code"], **result.as_dict()},
                       error="" if result.ok else status)


def _never(ctx: ToolContext, args: dict[str, Any]) -> ToolOutcome:  # pragma: no cover - never offered
    raise PermissionError("this tool is never offered to the agentic loop")


# The full registry, as the rest of the system knows it. The loop offers a FILTERED view of it
# (filtering, not adding: a tool missing from the view can never be called, whatever the model asks for).
REGISTRY: tuple[ToolSpec, ...] = (
    ToolSpec("searchDocs", TOOL_DESCRIPTIONS["searchDocs"], _params(["query"], query=_QUERY, domain=_DOMAIN),
             search_docs),
    ToolSpec("keywordSearch", TOOL_DESCRIPTIONS["keywordSearch"], _params(["query"], query=_QUERY, domain=_DOMAIN),
             keyword_search),
    ToolSpec("webSearch", TOOL_DESCRIPTIONS["webSearch"], _params(["query"], query=_QUERY), web_search),
    ToolSpec("recall_memory", TOOL_DESCRIPTIONS["recall_memory"], _params(["query"], query=_QUERY), recall_memory),
    ToolSpec("executeCode", TOOL_DESCRIPTIONS["executeCode"],
             _params(["code"], code={"type": "string", "description": CODE_ARGUMENT}), execute_code),
    ToolSpec("store_memory", TOOL_DESCRIPTIONS["store_memory"], _params(["content"], content={"type": "string"}),
             _never),
    ToolSpec("kb_meta", TOOL_DESCRIPTIONS["kb_meta"], _params([]), _never),
)
BY_NAME: dict[str, ToolSpec] = {t.name: t for t in REGISTRY}
# Read-only loop: it must never write memories or answer KB-meta questions by itself.
NEVER_OFFERED = frozenset({"store_memory", "kb_meta"})


def offered_tools(*, web_enabled: bool, sandbox_enabled: bool) -> tuple[ToolSpec, ...]:
    excluded = set(NEVER_OFFERED)
    if not web_enabled:
        excluded.add("webSearch")
    if not sandbox_enabled:
        excluded.add("executeCode")
    return tuple(t for t in REGISTRY if t.name not in excluded)


def parse_arguments(spec: ToolSpec, raw: str) -> dict[str, Any]:
    """The model's raw JSON checked against the schema; ValueError with a message the model can act on."""
    try:
        args = json.loads(raw) if raw and raw.strip() else {}
    except json.JSONDecodeError as exc:
        raise ValueError(texts.ARGUMENTS_NOT_JSON.format(reason=exc.msg)) from None
    if not isinstance(args, dict):
        raise ValueError(texts.ARGUMENTS_NOT_OBJECT)
    props = spec.parameters.get("properties", {})
    for name in spec.parameters.get("required", []):
        if name not in args:
            raise ValueError(texts.ARGUMENT_MISSING.format(name=name))
    clean: dict[str, Any] = {}
    for name, value in args.items():
        if name not in props:
            raise ValueError(texts.ARGUMENT_UNKNOWN.format(name=name))
        if props[name].get("type") == "string" and not isinstance(value, str):
            raise ValueError(texts.ARGUMENT_NOT_STRING.format(name=name))
        clean[name] = value
    for name in spec.parameters.get("required", []):
        if isinstance(clean[name], str) and not clean[name].strip():
            raise ValueError(texts.ARGUMENT_EMPTY.format(name=name))
    return clean


def _kb_outcome(ctx: ToolContext, tool: str, hits: Sequence[ScoredChunk], *, used_web: bool = False) -> ToolOutcome:
    fresh = ctx.tracker.filter_new(ctx.session_id, hits)
    filtered = len(hits) - len(fresh)
    note = texts.already_returned(filtered)
    if not fresh:
        return ToolOutcome(text=texts.no_new_results(tool, note), used_web=used_web, filtered=filtered)
    return ToolOutcome(text=render_results(tool, fresh, note, ctx.result_max_tokens), chunks=tuple(fresh),
                       used_web=used_web, filtered=filtered)


def render_results(tool: str, chunks: Sequence[ScoredChunk], note: str, max_tokens: int) -> str:
    """Compact numbered lines (title, domain, snippet, chunk id), fenced as data and cut to the per-result budget
    (the cut falls inside the fence, which always closes)."""
    header = texts.results_header(tool, len(chunks), note)
    inner = "\n".join(texts.result_line(number=i, title=c.document_title, url=c.url, domain=c.domain,
                                         chunk_id=c.chunk_id, snippet=_snippet(c.content))
                       for i, c in enumerate(chunks, start=1))
    text = f"{header}\n{fenced(inner, DOCUMENT_DATA)}"
    if estimate_tokens(text) > max_tokens:
        room = max(max_tokens - estimate_tokens(header) - 30, 1)
        text = f"{header}\n{fenced(truncate_to_tokens(inner, room) + chr(10) + texts.RESULTS_CUT, DOCUMENT_DATA)}"
    return text


def _snippet(content: str) -> str:
    return _SPACES.sub(" ", content).strip()[:SNIPPET_CHARS]
