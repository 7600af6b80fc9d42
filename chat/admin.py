"""Read-mostly admin for conversations: support staff can inspect answers and their retrieval logs."""
from __future__ import annotations

from django.contrib import admin

from chat.models import Conversation, Message


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


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    list_display = ("conversation", "role", "status", "confidence_band", "created_at")
    list_filter = ("role", "status", "confidence_band")
    readonly_fields = ("conversation", "role", "content", "citations", "retrieval_log", "confidence_score",
                       "confidence_band", "status", "error", "created_at")
