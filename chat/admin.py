"""Read-mostly admin for conversations: support staff can inspect answers and their retrieval logs."""
from __future__ import annotations

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from chat.models import Conversation, Message, MessageFeedback


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
