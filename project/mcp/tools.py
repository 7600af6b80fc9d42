"""What the MCP server's tools do, as plain synchronous functions of (user, arguments).

Each goes through the same code as the REST API — the retrieve pipeline and its validation,
the document selectors — so an MCP caller sees exactly what the same user sees over REST.
None of them writes to the knowledge base or to memory; `ask` saves the question and answer
in the caller's own conversation history, as the chat does.
"""
from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from typing import Any

from django.http import Http404

from chat.events import error_event
from chat.pipeline import ChatPipeline
from config_admin.conf import ai_config
from kb import selectors
from kb.access import (
    KbNotFound,
    askable_kb_ids,
    askable_kbs,
    is_active_user,
    key_allows,
    readable_kb_ids,
    requested_kb_ids,
)
from kb.citation_links import CitationLinks
from kb.models import Document, DocumentStatus
from kb.retrieval.api import RetrieveInputError, retrieve
from kb.selectors import document_list, domain_list

MAX_SECTION_CHARS = 4000
MAX_TOP_K = 50  # as POST /api/kb/retrieve/ (kb.retrieval.api.MAX_TOP_K), for both searches


class ToolInputError(ValueError):
    """Bad arguments: reported to the MCP client as a tool error with this message."""


def _kb_scope(user: Any, kb: list[int] | None, *, ask: bool = False) -> frozenset[int]:
    """The knowledge bases a call searches: every readable one, or the readable ones it names; an id the
    caller cannot read is reported exactly like one that does not exist. `ask`: the askable ones, for the
    searches that return snippets (a view grant reaches those, not document lists)."""
    try:
        return requested_kb_ids(user, kb, ask=ask)
    except KbNotFound:
        known = askable_kb_ids(user) if ask else readable_kb_ids(user)
        unknown = sorted({int(i) for i in kb or ()} - known)
        raise ToolInputError(f"no such knowledge base: {', '.join(map(str, unknown))} "
                             "(list_knowledge_bases shows the ones you can read)") from None
    except ValueError as exc:
        raise ToolInputError(str(exc)) from None


def search_kb(user: Any, *, query: str, top_k: int | None = None, kb: list[int] | None = None) -> dict[str, Any]:
    """The evidence `POST /api/kb/retrieve/` returns for the same query (the same function)."""
    _require(user)
    payload: dict[str, Any] = {"query": query}
    if top_k is not None:
        payload["top_k"] = top_k
    if kb is not None:
        _kb_scope(user, kb, ask=True)  # an unreadable id is named before any search starts
        payload["kb"] = kb
    try:
        return retrieve(payload, user=user)
    except RetrieveInputError as exc:
        raise ToolInputError(exc.message) from None
    except Http404:
        raise ToolInputError("no such knowledge base") from None


def keyword_search(user: Any, *, query: str, top_k: int = 10, domain: str | None = None,
                   kb: list[int] | None = None) -> dict[str, Any]:
    """BM25 over the knowledge base's chunks only (no embedding, no rerank): exact names and codes."""
    _require(user)
    scope = _kb_scope(user, kb, ask=True)
    query = (query or "").strip()
    if not query:
        raise ToolInputError("query must not be empty")
    limit = int(ai_config.get("retrieval.query_max_chars"))
    if len(query) > limit:
        raise ToolInputError(f"query is {len(query)} characters; the limit is {limit}")
    if isinstance(top_k, bool) or not 1 <= int(top_k) <= MAX_TOP_K:
        raise ToolInputError(f"top_k must be between 1 and {MAX_TOP_K}")
    # heavy: the indexes load scipy (about 0.3 s); project.asgi imports this module as the server starts
    from kb.search import get_searcher

    hits = get_searcher().scoped(scope).lexical_search(query, k=int(top_k), domains=[domain] if domain else None)
    # A hit of a base the caller may only ask is answered with its snippet, as a source card shows it.
    links = CitationLinks(user)
    links.prefetch_evidence(hits)
    return {"chunks": [{"chunk_id": c.chunk_id, "document_id": c.document_id, "document_title": c.document_title,
                        "domain": c.domain, "content": links.quote(c), "score": round(float(c.score), 4)}
                       for c in hits]}


def list_documents(user: Any, *, domain: str | None = None, status: str | None = "ready",
                   limit: int = 100, kb: list[int] | None = None) -> dict[str, Any]:
    """Documents as `GET /api/kb/documents/` lists them (ready ones unless another status is asked for)."""
    _require(user)
    scope = _kb_scope(user, kb)
    if status and status not in DocumentStatus.values:
        raise ToolInputError(f"status must be one of {', '.join(DocumentStatus.values)}")
    rows = document_list(kb_ids=scope, domain=domain or None,
                         status=status or None)[:max(1, min(int(limit), 500))]
    return {"documents": [{"id": d.pk, "title": d.title, "kb": d.kb_id, "domain": d.domain, "status": d.status,
                           "chunk_count": d.chunk_count, "created_at": d.created_at.isoformat()} for d in rows]}


def list_knowledge_bases(user: Any) -> dict[str, Any]:
    """The knowledge bases `GET /api/kbs/` lists for this user: the askable ones, default first."""
    _require(user)
    return {"knowledge_bases": [{"id": k.pk, "name": k.name, "description": k.description or "",
                                 "default": k.is_default} for k in askable_kbs(user)]}


def list_domains(user: Any) -> dict[str, Any]:
    _require(user)
    rows = domain_list(kb_ids=readable_kb_ids(user))
    return {"domains": [{"domain_id": d.domain_id, "kb": d.kb_id, "description": d.description or "",
                         "when_to_retrieve": d.when_to_retrieve or "", "document_count": d.document_count}
                        for d in rows]}


def read_section(user: Any, *, document_id: int, section: int = 1) -> dict[str, Any]:
    """One section (parent chunk, ~1000 characters, headings kept) of a ready document, 1-based."""
    _require(user)

    kb_ids = readable_kb_ids(user)
    try:
        document = selectors.ready_document(document_id=int(document_id), kb_ids=kb_ids)
    except (Document.DoesNotExist, ValueError, TypeError):
        raise ToolInputError("no such document, or it is not ready yet") from None
    parents = selectors.document_parent_chunks(document_id=document.pk, kb_ids=kb_ids)
    if not 1 <= int(section) <= max(1, len(parents)):
        raise ToolInputError(f"section must be between 1 and {len(parents)}")
    content = parents[int(section) - 1].content if parents else ""
    return {"document_id": document.pk, "title": document.title, "domain": document.domain,
            "section": int(section), "sections": len(parents), "content": content[:MAX_SECTION_CHARS]}


def ask_events(user: Any, *, question: str, cancel: threading.Event, document_id: int | None = None,
               kb: list[int] | None = None) -> Iterator[Any]:
    """A full chat turn (understanding, routing, retrieval, generation, citations) for this user: its events.

    Run by the chat's turn runner, so an MCP answer has the chat's deadline, capacity and cancellation.
    """
    if not is_active_user(user):
        return iter([error_event("unauthenticated", "authentication required")])
    return ChatPipeline().run(user=user, message=question, document_id=document_id, kb=kb, cancel=cancel)


def ask_result(events: Iterable[Any]) -> dict[str, Any]:
    """The `done` event's answer fields, or ToolInputError with the `error` event's message."""
    done: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    for event in events:
        if event.type == "done":
            done = event.data
        elif event.type == "error":
            error = event.data
    if done is None:
        message = (error or {}).get("message", "the answer could not be completed")
        raise ToolInputError(str(message))
    return {key: done.get(key) for key in ("answer", "citations", "confidence_score", "confidence_band",
                                           "conversation_id", "message_id", "trace_id")}


# The key scopes the searching and listing tools take, as POST /api/kb/retrieve/ and the document and base
# lists name theirs in `api_key_scopes`: an ask-only key (a widget's, whose secret is public) only asks.
TOOL_KEY_SCOPES = ("read",)


def _require(user: Any) -> None:
    """Every tool is for signed-in, active users, as IsAuthenticated is for the REST API; kb.access decides."""
    if not is_active_user(user):
        raise PermissionError("authentication required")
    if not key_allows(user, TOOL_KEY_SCOPES):
        raise PermissionError("this API key may only ask")
