"""SysAiConfig rows (one tunable each) and the history of their changes."""
from __future__ import annotations

from django.conf import settings
from django.db import models

from config_admin.registry import VALUE_TYPES


class SysAiConfig(models.Model):
    key = models.CharField(max_length=128, unique=True)
    value = models.TextField()
    value_type = models.CharField(max_length=8, choices=[(t, t) for t in VALUE_TYPES])
    category = models.CharField(max_length=64, db_index=True)
    description = models.CharField(max_length=512, blank=True)
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")

    class Meta:
        db_table = "sys_ai_config"
        ordering = ["category", "key"]
        verbose_name = "AI config entry"
        verbose_name_plural = "AI configuration"

    def __str__(self) -> str:
        return f"{self.key} = {self.value}"


class SysAiConfigChange(models.Model):
    config = models.ForeignKey(SysAiConfig, on_delete=models.CASCADE, related_name="changes")
    old_value = models.TextField()
    new_value = models.TextField()
    changed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    changed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "sys_ai_config_change"
        ordering = ["-changed_at", "-id"]

    def __str__(self) -> str:
        return f"{self.config.key}: {self.old_value} → {self.new_value}"
