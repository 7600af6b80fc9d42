"""API keys in the admin: listed (an administrator sees all, anyone else its own) and revoked; never shown,
and issued only through POST /api/keys/, whose answer is the one place the secret appears."""
from __future__ import annotations

from django.contrib import admin
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from apikeys import services
from apikeys.models import ApiKey


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ("name", "prefix", "scope", "created_by", "expires_at", "revoked_at", "last_used_at")
    list_filter = ("scope",)
    search_fields = ("name", "prefix")
    readonly_fields = ("name", "prefix", "scope", "kbs", "allowed_origins", "created_by", "expires_at",
                       "revoked_at", "last_used_at", "created_at")
    exclude = ("key_hash",)
    actions = ["revoke"]

    def get_queryset(self, request):
        return services.keys_visible_to(request.user)

    def has_add_permission(self, request) -> bool:
        return False

    @admin.action(description=_("Revoke the selected keys"))
    def revoke(self, request, queryset) -> None:
        count = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(request, _("%(count)d keys revoked.") % {"count": count})
