"""UserMemory: the system of record for long-term per-user memory."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class MemoryType(models.TextChoices):
    PREFERENCE = "preference", _("preference")
    FACT = "fact", _("fact")
    PROFILE = "profile", _("profile")
    INSTRUCTION = "instruction", _("instruction")


class MemorySource(models.TextChoices):
    EXTRACTOR = "extractor", _("model extractor")
    EXPLICIT = "explicit", _("explicit statement")
    USER = "user", _("edited by the user")


class UserMemory(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memories",
                             verbose_name=_("user"))
    memory_type = models.CharField(_("type"), max_length=32, choices=MemoryType.choices, default=MemoryType.FACT)
    content = models.TextField(_("content"))
    source = models.CharField(_("source"), max_length=16, choices=MemorySource.choices, default=MemorySource.EXPLICIT)
    access_count = models.PositiveIntegerField(_("times recalled"), default=0)
    # Soft delete keeps the audit trail; the vector is deleted physically so it can never be recalled.
    invalidated_at = models.DateTimeField(_("invalidated at"), null=True, blank=True, db_index=True)
    # Why it was invalidated: superseded, duplicate, evicted, forgotten by the user, cleared, by an admin.
    invalidated_reason = models.CharField(_("invalidation reason"), max_length=32, blank=True, default="")
    superseded_by = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL,
                                      related_name="supersedes", verbose_name=_("superseded by"))
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        db_table = "user_memory"
        verbose_name = _("user memory")
        verbose_name_plural = _("user memories")
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["user", "invalidated_at"])]

    def __str__(self) -> str:
        return self.content[:60]

    @property
    def is_active(self) -> bool:
        return self.invalidated_at is None
