"""Admin for long-term memory: read-only rows, active / invalidated filter, the supersede chain, and
invalidate / restore actions through the services. No hard delete: invalidation keeps the audit trail."""
from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from memory import selectors, services
from memory.models import UserMemory


class StateFilter(admin.SimpleListFilter):
    title = _("state")
    parameter_name = "state"

    def lookups(self, request, model_admin):
        return [("active", _("active")), ("invalidated", _("invalidated"))]

    def queryset(self, request, queryset):
        if self.value() == "active":
            return queryset.filter(invalidated_at__isnull=True)
        if self.value() == "invalidated":
            return queryset.filter(invalidated_at__isnull=False)
        return queryset


@admin.register(UserMemory)
class UserMemoryAdmin(admin.ModelAdmin):
    list_display = ["id", "user", "memory_type", "content", "source", "access_count", "state", "created_at"]
    list_filter = [StateFilter, "memory_type", "source", "invalidated_reason"]
    search_fields = ["content", "user__username"]
    list_select_related = ["user"]
    actions = ["invalidate_selected", "restore_selected"]
    fields = ["user", "memory_type", "content", "source", "access_count", "created_at", "updated_at",
              "invalidated_at", "invalidated_reason", "superseded_by", "chain"]
    readonly_fields = fields

    @admin.display(description=_("state"))
    def state(self, obj: UserMemory) -> str:
        if obj.invalidated_at is None:
            return str(_("active"))
        return str(_("invalidated (%(reason)s)") % {"reason": obj.invalidated_reason or "-"})

    @admin.display(description=_("supersede chain (oldest first)"))
    def chain(self, obj: UserMemory) -> str:
        rows = selectors.memory_chain(memory=obj)
        if len(rows) == 1:
            return "—"
        return format_html("<ol>{}</ol>", format_html_join("", "<li>{}<a href='{}'>#{}</a> {} · {}</li>", (
            ("→ " if r.pk == obj.pk else "", reverse("admin:memory_usermemory_change", args=[r.pk]), r.pk,
             r.content[:80], _("active") if r.invalidated_at is None else r.invalidated_reason or _("invalidated"))
            for r in rows)))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # memories come from what users say (extractor) or from users themselves

    def has_delete_permission(self, request: HttpRequest, obj: UserMemory | None = None) -> bool:
        return False  # also removes the bulk delete action

    @admin.action(description=_("Invalidate selected memories (soft delete)"), permissions=["change"])
    def invalidate_selected(self, request: HttpRequest, queryset: QuerySet[UserMemory]) -> None:
        count = services.memory_invalidate(memories=list(queryset.filter(invalidated_at__isnull=True)))
        self.message_user(request, ngettext("%(count)d memory invalidated.", "%(count)d memories invalidated.",
                                            count) % {"count": count}, messages.SUCCESS)

    @admin.action(description=_("Restore selected memories"), permissions=["change"])
    def restore_selected(self, request: HttpRequest, queryset: QuerySet[UserMemory]) -> None:
        count = services.memory_restore(memories=list(queryset.filter(invalidated_at__isnull=False)))
        self.message_user(request, ngettext("%(count)d memory restored.", "%(count)d memories restored.",
                                            count) % {"count": count}, messages.SUCCESS)
