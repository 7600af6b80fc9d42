"""Reads of the chat's own tables: a user's conversations, turn history, answers and usage.

The documents a turn may read come from kb.selectors, which owns those tables."""
from __future__ import annotations

from collections.abc import Collection
from datetime import date
from typing import Any

from django.db.models import Count, QuerySet, Sum

from chat.models import Conversation, Message, MessageRole, MessageStatus, MessageUsage
from chat.types import ConversationContext, PreviousTurn, SourceRef
from kb.selectors import readable_document_ids, section_headings


def conversation_list(*, user: Any) -> QuerySet[Conversation]:
    return (Conversation.objects.filter(user=user).annotate(message_count=Count("messages"))
            .order_by("-updated_at", "-id"))


def conversation_get(*, user: Any, conversation_id: int) -> Conversation:
    """The caller's own conversation; another user's id raises DoesNotExist exactly like an unknown one."""
    return Conversation.objects.get(pk=conversation_id, user=user)


def answer_get(*, user: Any, message_id: int) -> Message:
    """An answer in one of the caller's own conversations; anything else raises DoesNotExist."""
    return Message.objects.get(pk=message_id, role=MessageRole.ASSISTANT, conversation__user=user)


def answer_question(*, answer: Message) -> str:
    """The question `answer` replied to: the user's message just before it in its conversation."""
    return (Message.objects.filter(conversation_id=answer.conversation_id, role=MessageRole.USER, pk__lt=answer.pk)
            .order_by("-pk").values_list("content", flat=True).first()) or ""


def conversation_history(*, conversation: Conversation, exclude_id: int | None = None,
                         before_id: int | None = None, limit: int = 20) -> list[dict[str, str]]:
    """The last `limit` finished turns as chat messages, oldest first (failed answers are not history);
    with `before_id`, only the messages before that one."""
    rows = (Message.objects.filter(conversation=conversation)
            .exclude(role=MessageRole.ASSISTANT, status=MessageStatus.ERROR)
            .exclude(content="")
            .order_by("-created_at", "-id"))
    if exclude_id is not None:
        rows = rows.exclude(pk=exclude_id)
    if before_id is not None:
        rows = rows.filter(pk__lt=before_id)
    picked = list(rows.values("role", "content")[:limit])
    return [{"role": r["role"], "content": r["content"]} for r in reversed(picked)]


def conversation_context(*, conversation: Conversation, kb_ids: Collection[int],
                         before_id: int | None = None) -> ConversationContext:
    """The last answered turn before message `before_id`: question, rewrite, answer, cited documents
    (most cited first) and the first document's section headings — what a follow-up may refer to.

    Only documents of `kb_ids` (what this turn may read) are named: a document cited before a revoke, or in
    a base this turn does not ask, gives neither its title nor its headings to the rewrite."""
    answers = Message.objects.filter(conversation=conversation, role=MessageRole.ASSISTANT,
                                     status=MessageStatus.COMPLETE).exclude(content="")
    if before_id is not None:
        answers = answers.filter(pk__lt=before_id)
    answer = answers.order_by("-created_at", "-id").first()
    if answer is None:
        return ConversationContext()
    question = (Message.objects.filter(conversation=conversation, role=MessageRole.USER, pk__lt=answer.pk)
                .order_by("-created_at", "-id").values_list("content", flat=True).first()) or ""
    log = answer.retrieval_log if isinstance(answer.retrieval_log, dict) else {}
    classification = log.get("classification") if isinstance(log.get("classification"), dict) else {}
    counts: dict[int | None, list] = {}
    for position, citation in enumerate(answer.citations if isinstance(answer.citations, list) else []):
        if isinstance(citation, dict) and citation.get("document_title"):
            entry = counts.setdefault(citation.get("document_id"), [0, position, str(citation["document_title"])])
            entry[0] += 1
    # A web or tool source has no document id and is the answer's own text; a document must still be readable.
    readable = readable_document_ids(document_ids=[d for d in counts if isinstance(d, int)], kb_ids=kb_ids)
    ranked = sorted((kv for kv in counts.items() if kv[0] is None or kv[0] in readable),
                    key=lambda kv: (-kv[1][0], kv[1][1]))
    sources = tuple(SourceRef(document_id=doc, title=title) for doc, (_, _, title) in ranked)
    sections = section_headings(document_id=sources[0].document_id, kb_ids=kb_ids) \
        if sources and sources[0].document_id else ()
    return ConversationContext(previous=PreviousTurn(
        question=question, rewritten=str(classification.get("rewritten") or ""), answer=answer.content,
        sources=sources, sections=sections))


def usage_daily_totals(*, since: date) -> list[dict[str, Any]]:
    """Token and cost totals per day, user and model tier (newest day first), for the admin."""
    return list(MessageUsage.objects.filter(day__gte=since)
                .values("day", "user__username", "tier")
                .annotate(priced=Count("cost"), rows=Count("id"), messages=Count("message", distinct=True),
                          calls=Sum("calls"), input_tokens=Sum("input_tokens"), output_tokens=Sum("output_tokens"),
                          cost=Sum("cost"))
                .order_by("-day", "user__username", "tier"))
