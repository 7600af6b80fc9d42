"""Builds the orchestrator of one chat turn from one config snapshot and the process's backends."""
from __future__ import annotations

import logging
from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any

from django.db import close_old_connections

from chat.agentic.orchestrator import AgenticSearchOrchestrator
from chat.agentic.search import KbDocSearch
from docmind import backends
from docmind.llm.base import ChatModel
from docmind.models import McpServer
from docmind.sandbox import PythonSandbox, SandboxUnavailable
from kb.domains.knowledge_map import current_knowledge_map

if TYPE_CHECKING:
    from kb.retrieval.params import RetrievalParams

log = logging.getLogger(__name__)


def build_orchestrator(*, snapshot: Mapping[str, Any], chat_model: ChatModel | None, kb_ids: frozenset[int],
                       params: RetrievalParams | None = None,
                       owner: Hashable | None = None) -> AgenticSearchOrchestrator:
    """Real backends: KB searcher, embedder, reranker; web search and the sandbox only when enabled.
    Without a chat model the offline planner drives the same loop. The searcher, the finisher's
    lookups and the knowledge map are all limited to the knowledge bases in `kb_ids`. `params` are the
    turn's retrieval parameters (read once with its other stages); without them they are read here."""
    # heavy: the retrieval stages and the indexes load scipy (about 0.3 s); the URL conf imports this module
    from kb.retrieval.compose import build_evidence_finisher, build_hybrid_search, retrieval_params
    from kb.search import get_searcher

    _warm_imports()
    params = params or retrieval_params(snapshot)
    web = backends.get_web_search()
    embed_query = backends.get_embedder().embed_query
    docs = KbDocSearch(hybrid=build_hybrid_search(params, kb_ids=kb_ids, embed_query=embed_query),
                       searcher=get_searcher().scoped(kb_ids))
    sandbox = None
    if snapshot["sandbox.enabled"]:
        try:
            sandbox = PythonSandbox(timeout_seconds=float(snapshot["sandbox.timeout_seconds"]),
                                    memory_mb=int(snapshot["sandbox.memory_mb"]))
        except SandboxUnavailable as exc:
            # Switched on where the runner works, then moved to a machine where it does not:
            # executeCode is withdrawn (never run weaker), and the reason is logged.
            log.warning("executeCode withdrawn: %s", exc)
    extra_tools, notes = _external_tools()
    return AgenticSearchOrchestrator(
        extra_tools=extra_tools, notes=notes,
        on_worker_thread=close_old_connections, owner=owner,
        planner=chat_model, model=str(snapshot["llm.main_model"]), docs=docs,
        finisher=build_evidence_finisher(params, kb_ids=kb_ids, web=web),
        max_iterations=int(snapshot["agentic.max_iterations"]),
        knowledge_map=_knowledge_map(kb_ids), web=web, sandbox=sandbox, k=params.top_k)


def _external_tools() -> tuple[list, list[str]]:
    """Allowlisted tools of the enabled external MCP servers (none registered: no cost, no call)."""
    servers = list(McpServer.objects.filter(enabled=True))
    if not servers:
        return [], []
    # heavy: the MCP client and anyio (about 8 ms) load only once a server is registered
    from chat.agentic.external import external_tools
    from docmind.mcp.client import RemoteServer

    return external_tools([RemoteServer.from_row(row) for row in servers])


def _knowledge_map(kb_ids: frozenset[int]) -> str:
    # The map helps the planner aim; a failure to build it must not cost the user the loop.
    try:
        return current_knowledge_map(kb_ids=kb_ids)
    except Exception:
        log.exception("knowledge map unavailable for the planner prompt")
        return ""


def _warm_imports() -> None:
    # pymilvus imports scipy.sparse lazily inside its first search; parallel tool calls on pool
    # threads raced in that import ("partially initialized module 'scipy.sparse._bsr'"), so
    # import it once here, on the caller's thread, before any tool runs.
    try:
        # heavy: scipy (about 0.3 s) loads when an agentic turn starts, not with this module (the URL conf imports it)
        import scipy.sparse  # noqa: F401
    except ImportError:
        pass
