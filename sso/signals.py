"""Receivers: a directory error marks the sign-in request; sign-in and sign-out keep the session list."""
from __future__ import annotations

import ldap
from django.contrib.auth.signals import user_logged_in, user_logged_out
from django.dispatch import receiver
from django_auth_ldap.backend import ldap_error

from docmind.signin import mark_directory_unavailable
from sso.sessions import session_forget, session_record

# Errors that say the directory could not be asked at all (as opposed to refusing the credentials).
_UNREACHABLE = (ldap.SERVER_DOWN, ldap.TIMEOUT, ldap.CONNECT_ERROR, ldap.TIMELIMIT_EXCEEDED, ldap.UNAVAILABLE,
                ldap.BUSY)


@receiver(ldap_error)
def _directory_error(sender, context, user, request=None, exception=None, **kwargs) -> None:
    if isinstance(exception, _UNREACHABLE):
        mark_directory_unavailable(request)


@receiver(user_logged_in)
def _session_started(sender, request, user, **kwargs) -> None:
    session_record(request=request, user=user)


@receiver(user_logged_out)
def _session_ended(sender, request, user, **kwargs) -> None:
    session_forget(request=request)
