"""Signed-in sessions: recorded at sign-in, listed for their owner, ended by their owner or by staff."""
from __future__ import annotations

from importlib import import_module

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.contrib.sessions.models import Session
from django.db import transaction
from django.http import HttpRequest
from django.utils import timezone
from rest_framework.authtoken.models import Token

from docmind.lockout import client_ip
from sso.models import UserSession


def _store(session_key: str | None = None):
    return import_module(settings.SESSION_ENGINE).SessionStore(session_key)


def session_record(*, request: HttpRequest, user: AbstractBaseUser) -> UserSession | None:
    """Remember the session `login()` just started (the key is new: login cycles it)."""
    key = getattr(getattr(request, "session", None), "session_key", None)
    if not key:
        return None
    backend = request.session.get("_auth_user_backend", "")
    provider = {"sso.ldap_backend.DirectoryBackend": "ldap", "sso.oidc.OidcBackend": "oidc"}.get(backend, "local")
    row, _created = UserSession.objects.update_or_create(session_key=key, defaults={
        "user": user, "ip_address": client_ip(request)[:64],
        "user_agent": request.META.get("HTTP_USER_AGENT", "")[:256], "provider": provider})
    return row


def session_forget(*, request: HttpRequest) -> None:
    key = getattr(getattr(request, "session", None), "session_key", None)
    if key:
        UserSession.objects.filter(session_key=key).delete()


def sessions_of(*, user: AbstractBaseUser) -> list[UserSession]:
    """The user's live sessions, newest first; rows of sessions that expired meanwhile are dropped."""
    rows = list(UserSession.objects.filter(user=user))
    live = [row for row in rows if _store().exists(row.session_key)]
    gone = [row.pk for row in rows if row not in live]
    if gone:
        UserSession.objects.filter(pk__in=gone).delete()
    return live


def session_end(*, user: AbstractBaseUser, session_id: int) -> bool:
    """End one of `user`'s own sessions; False when it is not theirs (or no longer exists)."""
    row = UserSession.objects.filter(user=user, pk=session_id).first()
    if row is None:
        return False
    _end(row)
    return True


def user_sessions_end_all(*, user: AbstractBaseUser, keep_session_key: str | None = None) -> int:
    """End every session of `user` (but `keep_session_key`) and revoke their API token. Returns sessions ended."""
    rows = list(UserSession.objects.filter(user=user).exclude(session_key=keep_session_key or ""))
    for row in rows:
        _end(row)
    # Sessions started before they were recorded (an upgrade) hold the user's id too: find those in the store
    # where it can be searched (the database engine), so "end all" means all.
    ended = len(rows) + _end_unrecorded(user=user, keep_session_key=keep_session_key)
    Token.objects.filter(user=user).delete()
    return ended


def _end(row: UserSession) -> None:
    with transaction.atomic():
        _store(row.session_key).delete()
        row.delete()


def _end_unrecorded(*, user: AbstractBaseUser, keep_session_key: str | None) -> int:
    if settings.SESSION_ENGINE not in ("django.contrib.sessions.backends.db",
                                       "django.contrib.sessions.backends.cached_db"):
        return 0

    count = 0
    for session in Session.objects.filter(expire_date__gt=timezone.now()).exclude(session_key=keep_session_key or ""):
        if str(session.get_decoded().get("_auth_user_id")) == str(user.pk):
            _store(session.session_key).delete()
            count += 1
    return count
