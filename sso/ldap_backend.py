"""Directory sign-in: django-auth-ldap's backend, kept off local accounts and mapping groups to roles and grants."""
from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django_auth_ldap.backend import LDAPBackend

from sso.models import Provider
from sso.services import IdentityConflict, identity_link, is_linked, user_apply_external_groups


class DirectoryBackend(LDAPBackend):
    """Signs a user in by binding to the directory as them (configured by DOCMIND_LDAP_*, see sso.config).

    A DocMind account that did not come from the directory (the local admin, say) is never looked up there:
    a directory entry with the same name cannot take it over, and a local sign-in never waits for a
    directory that is down.
    """

    def authenticate(self, request, username=None, password=None, **kwargs):
        if not username or not password:
            return None
        existing = get_user_model().objects.filter(username__iexact=username.strip()).first()
        if existing is not None and not is_linked(user=existing, provider=Provider.LDAP):
            return None
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None or not user.is_active:
            # A user deactivated in DocMind stays out even while the directory still lists them.
            return None
        return user

    def ldap_to_django_username(self, username):
        # Directories match names case-insensitively: `Dana` and `dana` are one entry, so one DocMind user.
        return username.lower()

    def get_or_build_user(self, username, ldap_user):
        user, built = super().get_or_build_user(username, ldap_user)
        if not built and not is_linked(user=user, provider=Provider.LDAP):
            raise ldap_user.AuthenticationFailed(f"{user} is a local account")
        return user, built

    def authenticate_ldap_user(self, ldap_user, password):
        user = super().authenticate_ldap_user(ldap_user, password)
        if user is None:
            return None
        try:
            identity_link(user=user, provider=Provider.LDAP, subject=ldap_user.dn.lower())
        except IdentityConflict:
            return None
        groups = set(ldap_user.group_dns) if getattr(settings, "AUTH_LDAP_GROUP_SEARCH", None) else set()
        user_apply_external_groups(user=user, provider=Provider.LDAP, groups=groups,
                                   mapping=settings.DOCMIND_LDAP.mapping)
        return user
