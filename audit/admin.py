"""The audit trail in the admin: filterable, exported as CSV, never changed; deleted by a superuser only."""
from __future__ import annotations

from auditlog.admin import LogEntryAdmin
from django.contrib import admin
from django.http import StreamingHttpResponse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from audit.models import AuditEntry
from audit.selectors import csv_lines
from kb.access import is_kb_admin

if admin.site.is_registered(AuditEntry):
    admin.site.unregister(AuditEntry)


@admin.register(AuditEntry)
class AuditEntryAdmin(LogEntryAdmin):
    # No date hierarchy and no full count: both scan the whole table, which holds millions of rows.
    date_hierarchy = None
    show_full_result_count = False
    list_filter = ["action", ("timestamp", admin.DateFieldListFilter), "content_type",
                   ("actor", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["object_repr", "actor__username"]
    actions = ["export_csv"]

    def has_module_permission(self, request) -> bool:
        return is_kb_admin(request.user)

    def has_view_permission(self, request, obj=None) -> bool:
        return is_kb_admin(request.user)

    def has_delete_permission(self, request, obj=None) -> bool:
        # Append-only: an administrator who could delete entries could delete the trace of what it did.
        return bool(request.user.is_superuser)

    @admin.action(description=_("Export the selected entries as CSV"))
    def export_csv(self, request, queryset):
        response = StreamingHttpResponse(csv_lines(queryset.select_related("actor", "content_type")
                                                   .order_by("-timestamp", "-id").iterator(chunk_size=2000)),
                                         content_type="text/csv; charset=utf-8")
        stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
        response["Content-Disposition"] = f'attachment; filename="audit-{stamp}.csv"'
        return response
