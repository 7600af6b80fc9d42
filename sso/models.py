"""Which external account a user is, and the signed-in sessions a user can see and end."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class Provider(models.TextChoices):
    LDAP = "ldap", _("directory (LDAP)")
    OIDC = "oidc", _("OpenID Connect")


class ExternalIdentity(models.Model):
    """Links a DocMind user to one directory entry or identity-provider subject.

    Only a linked user can sign in through that provider: a directory entry named like a local account (say
    `admin`) never signs in as it.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="external_identities",
                             verbose_name=_("user"))
    provider = models.CharField(_("provider"), max_length=8, choices=Provider.choices)
    # The entry's DN (lower case) for LDAP; "issuer sub" for OpenID Connect.
    subject = models.CharField(_("subject"), max_length=512)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    last_login_at = models.DateTimeField(_("last sign-in"), null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["provider", "subject"], name="sso_identity_subject_once"),
            models.UniqueConstraint(fields=["user", "provider"], name="sso_identity_user_provider_once"),
        ]
        verbose_name = _("external identity")
        verbose_name_plural = _("external identities")

    def __str__(self) -> str:
        return f"{self.provider}: {self.subject}"


class UserSession(models.Model):
    """One signed-in browser session: recorded at sign-in so its owner (or staff) can list and end it."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="signed_in_sessions",
                             verbose_name=_("user"))
    session_key = models.CharField(_("session key"), max_length=40, unique=True)
    created_at = models.DateTimeField(_("signed in at"), auto_now_add=True)
    ip_address = models.CharField(_("address"), max_length=64, blank=True, default="")
    user_agent = models.CharField(_("browser"), max_length=256, blank=True, default="")
    provider = models.CharField(_("signed in with"), max_length=16, blank=True, default="")

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("session")
        verbose_name_plural = _("sessions")

    def __str__(self) -> str:
        return f"{self.user_id} @ {self.created_at:%Y-%m-%d %H:%M}"

    @property
    def provider_label(self) -> str:
        """How the session signed in, in the reader's language: a provider's name, or DocMind's own password."""
        if self.provider in Provider.values:
            return str(Provider(self.provider).label)
        return str(_("DocMind password"))
