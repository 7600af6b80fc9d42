"""The model backend without passwords: local accounts' permissions, when local sign-in is switched off."""
from __future__ import annotations

from django.contrib.auth.backends import ModelBackend


class PermissionsOnlyBackend(ModelBackend):
    """Answers permission checks from roles and groups as ModelBackend does, but signs nobody in by password."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        return None
