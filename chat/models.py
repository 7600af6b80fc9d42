"""Conversations and their messages, with each answer's citations and retrieval log."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class Conversation(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="conversations",
                             verbose_name=_("user"))
    title = models.CharField(_("title"), max_length=120)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        ordering = ["-updated_at", "-id"]
        indexes = [models.Index(fields=["user", "-updated_at"])]
        verbose_name = _("conversation")
        verbose_name_plural = _("conversations")

    def __str__(self) -> str:
        return self.title


class MessageRole(models.TextChoices):
    USER = "user", _("user")
    ASSISTANT = "assistant", _("assistant")


class MessageStatus(models.TextChoices):
    COMPLETE = "complete", _("complete")
    ERROR = "error", _("error")
    CANCELLED = "cancelled", _("cancelled")


class Message(models.Model):
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="messages",
                                     verbose_name=_("conversation"))
    role = models.CharField(_("role"), max_length=16, choices=MessageRole.choices)
    content = models.TextField(_("content"), blank=True, default="")
    # Structured citations as sent in the `done` event (index, chunk_id, document_id, document_title…).
    citations = models.JSONField(_("citations"), default=list, blank=True)
    # Route, classification, KB and web chunks (kept apart), grade, timings, tool calls / agentic trace.
    retrieval_log = models.JSONField(_("trace"), default=dict, blank=True)
    confidence_score = models.FloatField(_("confidence score"), null=True, blank=True)
    confidence_band = models.CharField(_("confidence"), max_length=16, blank=True, default="")
    status = models.CharField(_("status"), max_length=16, choices=MessageStatus.choices,
                              default=MessageStatus.COMPLETE)
    error = models.TextField(_("error"), blank=True, default="")
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        verbose_name = _("message")
        verbose_name_plural = _("messages")

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
        verbose_name = _("token usage")
        verbose_name_plural = _("token usage (daily totals)")

    def __str__(self) -> str:
        return f"{self.model}: {self.input_tokens}+{self.output_tokens}"


class FeedbackRating(models.TextChoices):
    UP = "up", _("helpful")
    DOWN = "down", _("not helpful")


class MessageFeedback(models.Model):
    """A reader's verdict on one answer, kept beside the answer's trace so staff can find bad answers."""

    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="feedback", verbose_name=_("answer"))
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="message_feedback",
                             verbose_name=_("user"))
    rating = models.CharField(_("rating"), max_length=8, choices=FeedbackRating.choices)
    comment = models.TextField(_("comment"), blank=True, default="")
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        ordering = ["-updated_at", "-id"]
        verbose_name = _("feedback")
        verbose_name_plural = _("feedback")
        constraints = [models.UniqueConstraint(fields=["message", "user"], name="one_feedback_per_user_message")]

    def __str__(self) -> str:
        return f"{self.rating} on message {self.message_id}"
