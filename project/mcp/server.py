"""DocMind's knowledge base as an MCP server (the official SDK's MCPServer); read-only tools.

The caller is the Django user whose API token authenticated the HTTP request (see
`project.mcp.asgi`), or, over stdio, the user of the token given to `manage.py mcp_stdio`.
Tool bodies are synchronous ORM/pipeline code, so each call runs in a worker thread.
"""
from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from typing import Annotated, Any, Literal

from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.db import close_old_connections
from django.utils import translation
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import ToolAnnotations
from pydantic import Field, ValidationError

from chat import runner as chat_runner
from config_admin.conf import ai_config
from docmind.mcp import errors
from kb.access import KEY_SCOPE_ATTR
from project.mcp import tools

USER_SCOPE_KEY = "docmind.user_id"
# The kb.access.KeyScope of a request made with an API key (project.mcp.asgi); absent for a token.
KEY_SCOPE_KEY = "docmind.key_scope"
# An asyncio.Event the mount sets when the HTTP client goes away (project.mcp.asgi).
DISCONNECTED_SCOPE_KEY = "docmind.disconnected"
# stdio has no request: the command sets the one user the whole session runs as.
_stdio_user_id: contextvars.ContextVar[int | None] = contextvars.ContextVar("docmind_mcp_stdio_user", default=None)

READ_ONLY = ToolAnnotations(readOnlyHint=True, destructiveHint=False, openWorldHint=False)
INSTRUCTIONS = ("DocMind knowledge base (Chinese and English documents). Use search_kb for questions, "
                "keyword_search for exact names or codes, list_knowledge_bases / list_documents / list_domains "
                "to see what exists (pass knowledge-base ids as `kb` to narrow a search), "
                "read_section to read a document in order, and ask for a complete cited answer.")


def set_stdio_user(user_id: int) -> None:
    _stdio_user_id.set(user_id)


def _request(ctx: Context) -> Any:
    try:
        return ctx.request_context.request
    except ValueError:  # stdio, or an in-process client: no HTTP request
        return None


def _scope(ctx: Context) -> dict[str, Any]:
    scope = getattr(_request(ctx), "scope", None)
    return scope if isinstance(scope, dict) else {}


def _caller_id(ctx: Context) -> int | None:
    scope = _scope(ctx)
    if scope.get(USER_SCOPE_KEY) is not None:
        return int(scope[USER_SCOPE_KEY])
    return _stdio_user_id.get()


def _language(ctx: Context) -> str:
    headers = getattr(_request(ctx), "headers", None)
    return errors.client_language(headers.get("accept-language", "") if headers is not None else "")


def _caller_key(ctx: Context) -> Any:
    return _scope(ctx).get(KEY_SCOPE_KEY)


def _load_user(user_id: int | None, key: Any = None) -> Any:
    if user_id is None:
        return None
    user = get_user_model().objects.filter(pk=user_id, is_active=True).first()
    if user is not None and key is not None:
        setattr(user, KEY_SCOPE_ATTR, key)  # every access check is cut to the key's scope
    return user


async def _run(ctx: Context, func: Callable[..., dict[str, Any]], **kwargs: Any) -> dict[str, Any]:
    user_id, key, language = _caller_id(ctx), _caller_key(ctx), _language(ctx)

    def work() -> dict[str, Any]:
        close_old_connections()
        try:
            # Validation and failure messages in the client's language (the web UI's default is not theirs).
            with translation.override(language):
                return func(_load_user(user_id, key), **kwargs)
        finally:
            close_old_connections()

    try:
        return await sync_to_async(work, thread_sensitive=False)()
    except (tools.ToolInputError, PermissionError) as exc:
        raise ToolError(str(exc)) from None


async def _ask(ctx: Context, **kwargs: Any) -> dict[str, Any]:
    """One chat turn in the chat's own turn runner: the same deadline, capacity, per-user share and
    cancellation as a browser chat, and never a thread of the shared pool that token checks and other
    tools need. The turn is cancelled when the HTTP client goes away."""
    user_id, key = _caller_id(ctx), _caller_key(ctx)
    if user_id is None:
        raise ToolError("authentication required")
    runner = chat_runner.get_turn_runner()
    try:
        slot = runner.reserve(owner=user_id)
    except chat_runner.ServerBusy as exc:
        raise ToolError(str(exc)) from None
    cancel = threading.Event()
    events: list[Any] = []

    def produce() -> Any:  # in the runner's thread, which opens and closes its own connections
        return tools.ask_events(_load_user(user_id, key), cancel=cancel, **kwargs)

    async def collect() -> None:
        try:
            async for item in runner.stream(slot, produce, cancel, language=_language(ctx)):
                if item is not chat_runner.HEARTBEAT:
                    events.append(item)
        finally:
            slot.release()  # only matters when the turn never reached a thread

    disconnected = _scope(ctx).get(DISCONNECTED_SCOPE_KEY)
    turn = asyncio.ensure_future(collect())
    gone = asyncio.ensure_future(disconnected.wait()) if isinstance(disconnected, asyncio.Event) else None
    try:
        await asyncio.wait({turn} | ({gone} if gone else set()), return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not turn.done():  # the client left, or this call was cancelled: stop the turn
            cancel.set()
            turn.cancel()
        if gone is not None:
            gone.cancel()
    if turn.cancelled():
        raise ToolError("the client disconnected; the answer was cancelled")
    turn.result()
    try:
        return tools.ask_result(events)
    except tools.ToolInputError as exc:
        raise ToolError(str(exc)) from None



class DocMindMCPServer(MCPServer):
    """The SDK's server with the spec's errors: an unknown tool is a JSON-RPC error, rejected arguments
    are a readable tool error, and the input schemas carry the text limits configured right now."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context | None = None) -> Any:
        if self._tool_manager.get_tool(name) is None:
            raise errors.unknown_tool(name)
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError as exc:
            # A crash: the SDK's bare "Error executing tool" tells the caller nothing it can act on.
            raise UnexpectedToolError(errors.crash_text(name)) from exc.__cause__
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(errors.arguments_text(name, exc.__cause__)) from exc.__cause__
            raise

    async def list_tools(self) -> list[Any]:
        listed = await super().list_tools()
        limits = await sync_to_async(_text_limits, thread_sensitive=False)()
        return [_with_text_limits(tool, limits.get(tool.name, {})) for tool in listed]


def _text_limits() -> dict[str, dict[str, int]]:
    """Tool → argument → the longest text the tool accepts (sys_ai_config rows, changeable at run time)."""
    close_old_connections()
    try:
        snapshot = ai_config.snapshot()
    finally:
        close_old_connections()
    query, question = int(snapshot["retrieval.query_max_chars"]), int(snapshot["chat.max_message_chars"])
    return {"search_kb": {"query": query}, "keyword_search": {"query": query}, "ask": {"question": question}}


def _with_text_limits(tool: Any, limits: dict[str, int]) -> Any:
    if not limits:
        return tool
    schema = dict(tool.input_schema)
    properties = dict(schema.get("properties", {}))
    for name, limit in limits.items():
        if name in properties:
            properties[name] = {**properties[name], "maxLength": limit}
    return tool.model_copy(update={"input_schema": {**schema, "properties": properties}})


# The bounds the tools enforce, stated in the input schemas so that a client can check before calling.
KB_ARG = Field(description="Only these knowledge-base ids (from list_knowledge_bases); all readable ones if omitted",
               min_length=1)
KbIds = list[Annotated[int, Field(ge=1)]]
Query = Annotated[str, Field(min_length=1)]
TopK = Annotated[int, Field(ge=1, le=tools.MAX_TOP_K)]
Domain = Annotated[str, Field(min_length=1, max_length=64)]
DocumentStatusName = Literal["ready", "pending", "processing", "failed"]


def build_server() -> MCPServer:
    server = DocMindMCPServer("docmind", title="DocMind knowledge base", instructions=INSTRUCTIONS, version="1")

    @server.tool(annotations=READ_ONLY)
    async def search_kb(ctx: Context,
                        query: Annotated[Query, Field(description="The question or search text")],
                        top_k: Annotated[TopK | None, Field(description="Chunks to return, 1-50")] = None,
                        kb: Annotated[KbIds | None, KB_ARG] = None,
                        ) -> dict[str, Any]:
        """Search the knowledge base with the full retrieval pipeline (vector + BM25, rerank, MMR, grade):
        the evidence DocMind itself would answer from, with a confidence grade."""
        return await _run(ctx, tools.search_kb, query=query, top_k=top_k, kb=kb)

    @server.tool(annotations=READ_ONLY)
    async def keyword_search(ctx: Context,
                             query: Annotated[Query, Field(description="Words, names, codes to match literally")],
                             top_k: Annotated[TopK, Field(description="Chunks to return, 1-50")] = 10,
                             domain: Annotated[Domain | None, Field(description="Only this knowledge domain")] = None,
                             kb: Annotated[KbIds | None, KB_ARG] = None,
                             ) -> dict[str, Any]:
        """Keyword (BM25) search over the knowledge base: best for exact names, error codes, phrases."""
        return await _run(ctx, tools.keyword_search, query=query, top_k=top_k, domain=domain, kb=kb)

    @server.tool(annotations=READ_ONLY)
    async def list_documents(ctx: Context,
                             domain: Annotated[Domain | None, Field(description="Only this knowledge domain")] = None,
                             status: Annotated[DocumentStatusName | None,
                                               Field(description="ready (default), pending, processing or failed")
                                               ] = "ready",
                             kb: Annotated[KbIds | None, KB_ARG] = None,
                             ) -> dict[str, Any]:
        """The documents in the knowledge base (id, title, knowledge base, domain, status, chunk count)."""
        return await _run(ctx, tools.list_documents, domain=domain, status=status, kb=kb)

    @server.tool(annotations=READ_ONLY)
    async def list_knowledge_bases(ctx: Context) -> dict[str, Any]:
        """The knowledge bases the caller may read (id, name, description): pass ids as `kb` to narrow a search."""
        return await _run(ctx, tools.list_knowledge_bases)

    @server.tool(annotations=READ_ONLY)
    async def list_domains(ctx: Context) -> dict[str, Any]:
        """The knowledge domains: what each covers and when to search it."""
        return await _run(ctx, tools.list_domains)

    @server.tool(annotations=READ_ONLY)
    async def read_section(ctx: Context,
                           document_id: Annotated[int, Field(description="A document id from list_documents",
                                                             ge=1)],
                           section: Annotated[int, Field(description="1-based section number", ge=1)] = 1,
                           ) -> dict[str, Any]:
        """Read one section (~1000 characters) of a document in order; the reply says how many sections exist."""
        return await _run(ctx, tools.read_section, document_id=document_id, section=section)

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True, destructiveHint=False, openWorldHint=False,
                                             idempotentHint=False))
    async def ask(ctx: Context,
                  question: Annotated[Query, Field(description="The question, as a user would ask it")],
                  document_id: Annotated[int | None, Field(description="Answer from this document only", ge=1)
                                         ] = None,
                  kb: Annotated[KbIds | None, KB_ARG] = None,
                  ) -> dict[str, Any]:
        """A complete answer written from the knowledge base, with [n] citations and a confidence score
        (saved in the caller's own DocMind conversation history)."""
        return await _ask(ctx, question=question, document_id=document_id, kb=kb)

    return server
