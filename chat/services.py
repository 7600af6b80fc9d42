"""Writes to conversations and messages; the pipeline, the API and the admin all go through here."""
from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone

from chat.models import Conversation, FeedbackRating, Message, MessageFeedback, MessageRole, MessageStatus, MessageUsage
from docmind.telemetry.usage import price_of

FEEDBACK_COMMENT_CHARS = 2000

TITLE_CHARS = 40


def title_from_question(question: str) -> str:
    """The first line of the first question, cut so that the sidebar stays one line."""
    line = " ".join(question.split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"


@transaction.atomic
def conversation_start(*, user: Any, question: str) -> Conversation:
    return Conversation.objects.create(user=user, title=title_from_question(question) or "新对话")


@transaction.atomic
def conversation_rename(*, conversation: Conversation, title: str) -> Conversation:
    title = " ".join(title.split())[:120]
    if not title:
        raise ValueError("title must not be empty")
    conversation.title = title
    conversation.save(update_fields=["title", "updated_at"])
    return conversation


@transaction.atomic
def conversation_delete(*, conversation: Conversation) -> None:
    conversation.delete()


@transaction.atomic
def message_add_question(*, conversation: Conversation, content: str) -> Message:
    """Saved before any work starts, so a failing stream never loses the question."""
    message = Message.objects.create(conversation=conversation, role=MessageRole.USER, content=content)
    Conversation.objects.filter(pk=conversation.pk).update(updated_at=timezone.now())
    return message


@transaction.atomic
def message_add_answer(*, conversation: Conversation, content: str, status: str = MessageStatus.COMPLETE,
                       citations: list[dict] | None = None, retrieval_log: dict | None = None,
                       confidence_score: float | None = None, confidence_band: str = "",
                       error: str = "") -> Message:
    """The assistant's turn: complete, or error/cancelled with whatever text was produced."""
    message = Message.objects.create(
        conversation=conversation, role=MessageRole.ASSISTANT, content=content, status=status,
        citations=citations or [], retrieval_log=retrieval_log or {}, confidence_score=confidence_score,
        confidence_band=confidence_band, error=error,
    )
    Conversation.objects.filter(pk=conversation.pk).update(updated_at=timezone.now())
    return message


@transaction.atomic
def message_edit_question(*, message: Message, content: str) -> Message:
    """The user's corrected question takes the place of their last one; its answer is then redone in place
    (message_replace_answer), so the conversation never holds an answer to a question no longer shown."""
    message.content = content
    message.save(update_fields=["content"])
    Conversation.objects.filter(pk=message.conversation_id).update(updated_at=timezone.now())
    return message


@transaction.atomic
def message_replace_answer(*, message: Message, content: str, status: str = MessageStatus.COMPLETE,
                           citations: list[dict] | None = None, retrieval_log: dict | None = None,
                           confidence_score: float | None = None, confidence_band: str = "",
                           error: str = "") -> Message:
    """A regenerated answer takes the place of the last one: the same row, so the conversation keeps one
    answer per question and the usage rows of both attempts stay counted. Feedback was about the old
    text and goes."""
    message.content, message.status, message.error = content, status, error
    message.citations, message.retrieval_log = citations or [], retrieval_log or {}
    message.confidence_score, message.confidence_band = confidence_score, confidence_band
    message.save(update_fields=["content", "status", "error", "citations", "retrieval_log", "confidence_score",
                                "confidence_band"])
    MessageFeedback.objects.filter(message=message).delete()
    Conversation.objects.filter(pk=message.conversation_id).update(updated_at=timezone.now())
    return message


@transaction.atomic
def message_usage_record(*, message: Message, user: Any, usage: list[dict[str, Any]], tiers: dict[str, str],
                         prices: dict[str, Any]) -> list[MessageUsage]:
    """One row per model the answer used; `usage` rows as TurnUsage reports them (model, tokens, calls)."""
    rows = []
    # The server's day, whoever's request it is: daily usage totals must not depend on the reader's zone.
    today = timezone.localdate(timezone=timezone.get_default_timezone())
    for item in usage:
        cost = price_of(prices, model=item["model"], input_tokens=item["input_tokens"],
                        output_tokens=item["output_tokens"])
        rows.append(MessageUsage(
            message=message, user=user, model=item["model"][:128], tier=tiers.get(item["model"], "other"),
            calls=item["calls"], input_tokens=item["input_tokens"], output_tokens=item["output_tokens"],
            cost=None if cost is None else Decimal(str(cost)), estimated=item["estimated"], day=today))
    return MessageUsage.objects.bulk_create(rows)


def message_feedback_set(*, user: Any, message: Message, rating: str, comment: str = "") -> MessageFeedback:
    """One verdict per reader and answer: a second one replaces the first."""
    if message.role != MessageRole.ASSISTANT:
        raise ValueError("feedback is given on answers, not on questions")
    if rating not in FeedbackRating.values:
        raise ValueError(f"rating must be one of {', '.join(FeedbackRating.values)}")
    feedback, _ = MessageFeedback.objects.update_or_create(
        message=message, user=user, defaults={"rating": rating, "comment": comment.strip()[:FEEDBACK_COMMENT_CHARS]})
    return feedback


def message_feedback_clear(*, user: Any, message: Message) -> None:
    MessageFeedback.objects.filter(message=message, user=user).delete()
