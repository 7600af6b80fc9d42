"""Conversations and their messages, with each answer's citations and retrieval log."""
from __future__ import annotations

from django.conf import settings
from django.db import models


class Conversation(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="conversations")
    title = models.CharField(max_length=120)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at", "-id"]
        indexes = [models.Index(fields=["user", "-updated_at"])]

    def __str__(self) -> str:
        return self.title


class MessageRole(models.TextChoices):
    USER = "user", "user"
    ASSISTANT = "assistant", "assistant"


class MessageStatus(models.TextChoices):
    COMPLETE = "complete", "complete"
    ERROR = "error", "error"
    CANCELLED = "cancelled", "cancelled"


class Message(models.Model):
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="messages")
    role = models.CharField(max_length=16, choices=MessageRole.choices)
    content = models.TextField(blank=True, default="")
    # Structured citations as sent in the `done` event (index, chunk_id, document_id, document_title…).
    citations = models.JSONField(default=list, blank=True)
    # Route, classification, KB and web chunks (kept apart), grade, timings, tool calls / agentic trace.
    retrieval_log = models.JSONField(default=dict, blank=True)
    confidence_score = models.FloatField(null=True, blank=True)
    confidence_band = models.CharField(max_length=16, blank=True, default="")
    status = models.CharField(max_length=16, choices=MessageStatus.choices, default=MessageStatus.COMPLETE)
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.role}: {self.content[:40]}"


class MessageUsage(models.Model):
    """Tokens one answer spent on one model (one row per model per message), priced when rates exist."""

    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="usage")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    model = models.CharField(max_length=128)
    tier = models.CharField(max_length=16)  # main / small / extract / other
    calls = models.PositiveIntegerField(default=0)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    # Null when no price was configured for the model: unknown is not free.
    cost = models.DecimalField(max_digits=16, decimal_places=8, null=True, blank=True)
    estimated = models.BooleanField(default=False)
    # The local calendar day, stored: grouping by a computed date would need the database's time-zone tables.
    day = models.DateField(db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["day", "user"])]
        verbose_name = "token usage"
        verbose_name_plural = "token usage (daily totals)"

    def __str__(self) -> str:
        return f"{self.model}: {self.input_tokens}+{self.output_tokens}"


class FeedbackRating(models.TextChoices):
    UP = "up", "helpful"
    DOWN = "down", "not helpful"


class MessageFeedback(models.Model):
    """A reader's verdict on one answer, kept beside the answer's trace so staff can find bad answers."""

    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="feedback")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="message_feedback")
    rating = models.CharField(max_length=8, choices=FeedbackRating.choices)
    comment = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["message", "user"], name="one_feedback_per_user_message")]

    def __str__(self) -> str:
        return f"{self.rating} on message {self.message_id}"
