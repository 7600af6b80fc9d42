"""/api/audit/."""
from django.urls import path

from audit import api

app_name = "audit"

urlpatterns = [
    path("", api.AuditListView.as_view(), name="audit-list"),
    path("export/", api.AuditExportView.as_view(), name="audit-export"),
]
