"""Read-mostly admin for conversations (answers and their retrieval logs) and the daily token usage report."""
from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from chat.models import Conversation, Message, MessageFeedback, MessageUsage
from chat.selectors import usage_daily_totals


class MessageInline(admin.TabularInline):
    model = Message
    extra = 0
    fields = ("role", "status", "content", "confidence_band", "created_at")
    readonly_fields = fields
    can_delete = False
    show_change_link = True


@admin.register(Conversation)
class ConversationAdmin(admin.ModelAdmin):
    list_display = ("title", "user", "updated_at")
    search_fields = ("title", "user__username")
    list_select_related = ("user",)
    inlines = [MessageInline]


class FeedbackInline(admin.TabularInline):
    model = MessageFeedback
    extra = 0
    fields = ("rating", "comment", "user", "updated_at")
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    list_display = ("conversation", "role", "status", "confidence_band", "created_at")
    list_filter = ("role", "status", "confidence_band", "feedback__rating")
    inlines = [FeedbackInline]
    readonly_fields = ("conversation", "role", "content", "citations", "retrieval_log", "confidence_score",
                       "confidence_band", "status", "error", "created_at")


@admin.register(MessageUsage)
class MessageUsageAdmin(admin.ModelAdmin):
    """The change list is the daily report: totals per day, user and model tier; rows are never edited."""

    DEFAULT_DAYS = 30

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def changelist_view(self, request: HttpRequest, extra_context: dict | None = None) -> HttpResponse:
        if not self.has_view_permission(request):
            raise PermissionDenied
        try:
            days = min(366, max(1, int(request.GET.get("days", self.DEFAULT_DAYS))))
        except ValueError:
            days = self.DEFAULT_DAYS
        today = timezone.localdate(timezone=timezone.get_default_timezone())  # usage days are the server's
        rows = usage_daily_totals(since=today - timedelta(days=days - 1))
        for row in rows:
            # A total is only a price when every row in it was priced; otherwise say what is missing.
            row["partial_cost"] = row["priced"] < row["rows"]
        context = {**self.admin_site.each_context(request), "title": _("Token usage: daily totals"),
                   "opts": self.model._meta, "rows": rows, "days": days,
                   "choices": (1, 7, 30, 90, 366), **(extra_context or {})}
        return TemplateResponse(request, "admin/chat/usage_daily.html", context)


@admin.register(MessageFeedback)
class MessageFeedbackAdmin(admin.ModelAdmin):
    """Readers' verdicts, newest first; each links to the answer with its full trace."""

    list_display = ("rating", "comment_excerpt", "user", "answer_link", "confidence", "updated_at")
    list_filter = ("rating", "message__confidence_band")
    search_fields = ("comment", "user__username", "message__content")
    list_select_related = ("user", "message")
    readonly_fields = ("message", "user", "rating", "comment", "created_at", "updated_at")

    def has_add_permission(self, request) -> bool:
        return False

    @admin.display(description=_("comment"))
    def comment_excerpt(self, obj: MessageFeedback) -> str:
        return obj.comment[:80]

    @admin.display(description=_("answer and trace"))
    def answer_link(self, obj: MessageFeedback) -> str:
        url = reverse("admin:chat_message_change", args=[obj.message_id])
        return format_html('<a href="{}">{}</a>', url, obj.message.content[:60] or "—")

    @admin.display(description=_("confidence"))
    def confidence(self, obj: MessageFeedback) -> str:
        return obj.message.confidence_band or "—"
