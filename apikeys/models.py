"""An API key: a hashed secret, the bases it reaches, read or ask, an expiry, revocation and last use."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class KeyScope(models.TextChoices):
    # read: as a read grant on its bases (retrieve, documents, originals, chat, MCP); ask: chat only, and
    # what it answers is what a view grant shows.
    READ = "read", _("read")
    ASK = "ask", _("ask")


class ApiKey(models.Model):
    """The secret itself is never stored: `prefix` finds the row, `key_hash` (SHA-256) confirms the secret."""

    name = models.CharField(_("name"), max_length=128)
    prefix = models.CharField(_("prefix"), max_length=16, unique=True)
    key_hash = models.CharField(_("key hash"), max_length=64)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_keys",
                                   verbose_name=_("created by"))
    kbs = models.ManyToManyField("kb.KnowledgeBase", related_name="api_keys", verbose_name=_("knowledge bases"))
    scope = models.CharField(_("scope"), max_length=8, choices=KeyScope.choices)
    # Origins (scheme://host[:port]) whose pages may embed the chat widget with this key; empty: no widget.
    allowed_origins = models.JSONField(_("allowed origins"), default=list, blank=True)
    expires_at = models.DateTimeField(_("expires at"), null=True, blank=True)
    revoked_at = models.DateTimeField(_("revoked at"), null=True, blank=True)
    last_used_at = models.DateTimeField(_("last used at"), null=True, blank=True)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("API key")
        verbose_name_plural = _("API keys")

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    def is_usable(self, now=None) -> bool:
        now = now or timezone.now()
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)
