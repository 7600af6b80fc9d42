"""The audit table: django-auditlog's entry with the indexes the trail's filters need at millions of rows."""
from __future__ import annotations

from auditlog.models import AbstractLogEntry
from django.db import models
from django.utils.translation import gettext_lazy as _


class AuditEntry(AbstractLogEntry):
    """Who did what and when, with before/after values. Rows are only ever added, except by a superuser."""

    class Meta(AbstractLogEntry.Meta):
        # The list is read newest first, filtered by who, by what kind of action or by what kind of object.
        indexes = [
            models.Index(fields=["actor", "-timestamp"], name="audit_actor_time"),
            models.Index(fields=["action", "-timestamp"], name="audit_action_time"),
            models.Index(fields=["content_type", "-timestamp"], name="audit_type_time"),
        ]
        verbose_name = _("audit entry")
        verbose_name_plural = _("audit trail")
