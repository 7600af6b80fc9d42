"""Reads for the chat: a user's own conversations, turn history, and documents a user may pick."""
from __future__ import annotations

from typing import Any

from django.db.models import Count, QuerySet

from chat.models import Conversation, Message, MessageRole, MessageStatus
from kb.models import Chunk, ChunkLevel, Document, DocumentStatus


def conversation_list(*, user: Any) -> QuerySet[Conversation]:
    return (Conversation.objects.filter(user=user).annotate(message_count=Count("messages"))
            .order_by("-updated_at", "-id"))


def conversation_get(*, user: Any, conversation_id: int) -> Conversation:
    """The caller's own conversation; another user's id raises DoesNotExist exactly like an unknown one."""
    return Conversation.objects.get(pk=conversation_id, user=user)


def answer_get(*, user: Any, message_id: int) -> Message:
    """An answer in one of the caller's own conversations; anything else raises DoesNotExist."""
    return Message.objects.get(pk=message_id, role=MessageRole.ASSISTANT, conversation__user=user)


def conversation_history(*, conversation: Conversation, exclude_id: int | None = None,
                         limit: int = 20) -> list[dict[str, str]]:
    """The last `limit` finished turns as chat messages, oldest first (failed answers are not history)."""
    rows = (Message.objects.filter(conversation=conversation)
            .exclude(role=MessageRole.ASSISTANT, status=MessageStatus.ERROR)
            .exclude(content="")
            .order_by("-created_at", "-id"))
    if exclude_id is not None:
        rows = rows.exclude(pk=exclude_id)
    picked = list(rows.values("role", "content")[:limit])
    return [{"role": r["role"], "content": r["content"]} for r in reversed(picked)]


def ready_documents(*, limit: int = 500) -> list[dict[str, Any]]:
    """Documents a user can select for SELECTED_DOC, newest first."""
    rows = Document.objects.filter(status=DocumentStatus.READY).order_by("title", "id")[:limit]
    return [{"id": d.id, "title": d.title, "domain": d.domain} for d in rows]


def ready_document(*, document_id: int) -> Document:
    return Document.objects.get(pk=document_id, status=DocumentStatus.READY)


def document_parent_chunks(*, document_id: int) -> list[Chunk]:
    """A document's parent chunks in reading order: the material of a direct read."""
    return list(Chunk.objects.filter(document_id=document_id, level=ChunkLevel.PARENT)
                .select_related("document").order_by("ordinal"))

