"""UserMemory: the system of record for long-term per-user memory (seed #34)."""
from __future__ import annotations

from django.conf import settings
from django.db import models


class UserMemory(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memories")
    memory_type = models.CharField(max_length=32, default="fact")
    content = models.TextField()
    access_count = models.PositiveIntegerField(default=0)
    # Soft delete keeps the audit trail; the vector is deleted physically (seed C3).
    invalidated_at = models.DateTimeField(null=True, blank=True, db_index=True)
    superseded_by = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "user_memory"
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["user", "invalidated_at"])]

    def __str__(self) -> str:
        return self.content[:60]
