"""SysAiConfig rows (one tunable each) and the history of their changes."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from config_admin.registry import VALUE_TYPES


class SysAiConfig(models.Model):
    key = models.CharField(_("key"), max_length=128, unique=True)
    value = models.TextField(_("value"))
    value_type = models.CharField(_("type"), max_length=8, choices=[(t, t) for t in VALUE_TYPES])
    category = models.CharField(_("category"), max_length=64, db_index=True)
    description = models.CharField(_("description"), max_length=512, blank=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+", verbose_name=_("updated by"))

    class Meta:
        db_table = "sys_ai_config"
        ordering = ["category", "key"]
        verbose_name = _("AI configuration entry")
        verbose_name_plural = _("AI configuration")

    def __str__(self) -> str:
        return f"{self.key} = {self.value}"


class SysAiConfigChange(models.Model):
    config = models.ForeignKey(SysAiConfig, on_delete=models.CASCADE, related_name="changes",
                               verbose_name=_("configuration entry"))
    old_value = models.TextField(_("old value"))
    new_value = models.TextField(_("new value"))
    changed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+", verbose_name=_("changed by"))
    changed_at = models.DateTimeField(_("changed at"), auto_now_add=True)

    class Meta:
        db_table = "sys_ai_config_change"
        ordering = ["-changed_at", "-id"]
        verbose_name = _("configuration change")
        verbose_name_plural = _("configuration changes")

    def __str__(self) -> str:
        return f"{self.config.key}: {self.old_value} → {self.new_value}"
