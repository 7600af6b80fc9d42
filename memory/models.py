"""UserMemory: the system of record for long-term per-user memory."""
from __future__ import annotations

from django.conf import settings
from django.db import models


class MemoryType(models.TextChoices):
    PREFERENCE = "preference", "preference"
    FACT = "fact", "fact"
    PROFILE = "profile", "profile"
    INSTRUCTION = "instruction", "instruction"


class MemorySource(models.TextChoices):
    EXTRACTOR = "extractor", "model extractor"
    EXPLICIT = "explicit", "explicit statement"
    USER = "user", "edited by the user"


class UserMemory(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memories")
    memory_type = models.CharField(max_length=32, choices=MemoryType.choices, default=MemoryType.FACT)
    content = models.TextField()
    source = models.CharField(max_length=16, choices=MemorySource.choices, default=MemorySource.EXPLICIT)
    access_count = models.PositiveIntegerField(default=0)
    # Soft delete keeps the audit trail; the vector is deleted physically so it can never be recalled.
    invalidated_at = models.DateTimeField(null=True, blank=True, db_index=True)
    # Why it was invalidated: superseded, duplicate, evicted, forgotten by the user, cleared, by an admin.
    invalidated_reason = models.CharField(max_length=32, blank=True, default="")
    superseded_by = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL,
                                      related_name="supersedes")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "user_memory"
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["user", "invalidated_at"])]

    def __str__(self) -> str:
        return self.content[:60]

    @property
    def is_active(self) -> bool:
        return self.invalidated_at is None
