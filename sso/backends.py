"""Local-account backends: passwords stored in DocMind, and permissions for every account."""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend


class LocalBackend(ModelBackend):
    """Django's model backend, minus the password check for accounts that sign in elsewhere.

    An account created by the directory or the identity provider has no usable password here; Django would
    still run the password hasher on it (to hide that the account exists), which costs every directory
    sign-in a full hash (~0.5 s) before the directory is even asked.
    """

    def authenticate(self, request, username=None, password=None, **kwargs):
        if username is not None:
            user = get_user_model()._default_manager.filter(username=username).first()
            if user is not None and not user.has_usable_password() and user.external_identities.exists():
                return None
        return super().authenticate(request, username=username, password=password, **kwargs)


class PermissionsOnlyBackend(ModelBackend):
    """Answers permission checks from roles and groups as ModelBackend does, but signs nobody in by password."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        return None
