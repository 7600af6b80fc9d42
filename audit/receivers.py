"""Audit entries for what no model save says: sign-ins, failed sign-ins, lockouts, document moves and
re-indexing, and chunk edits."""
from __future__ import annotations

import logging
from typing import Any

from axes.signals import user_locked_out
from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_in, user_login_failed

from audit.models import AuditEntry as LogEntry
from docmind.lockout import client_ip
from kb.signals import chunk_edited, document_changed

log = logging.getLogger(__name__)

SIGN_IN, SIGN_IN_FAILED, LOCKOUT = "sign-in", "sign-in failed", "lockout"


def _actor(user: Any) -> Any:
    return user if getattr(user, "is_authenticated", False) and getattr(user, "pk", None) else None


def audit_event(*, instance: Any, action: int, event: str, actor: Any = None, changes: dict | None = None,
                extra: dict | None = None, remote_addr: str | None = None) -> LogEntry | None:
    """One entry about `instance`; never fails what it records (logged instead)."""
    try:
        kwargs: dict[str, Any] = {"action": action, "additional_data": {"event": event, **(extra or {})},
                                  "changes": changes or {}}
        if _actor(actor) is not None:
            kwargs["actor"] = actor
        if remote_addr:
            kwargs["remote_addr"] = remote_addr
        if getattr(instance, "pk", None) is None:  # an unknown username: the entry names it, no row
            kwargs["object_pk"] = ""
        return LogEntry.objects.log_create(instance, force_log=True, **kwargs)
    except Exception:  # noqa: BLE001 - an audit failure is logged, the action it records stands
        log.exception("audit: could not record %s", event)
        return None


def _address(request: Any) -> str | None:
    if request is None:
        return None

    try:
        return client_ip(request) or None
    except Exception:  # noqa: BLE001
        return None


def _user_named(username: str | None) -> Any:
    if not username:
        return None
    return get_user_model().objects.filter(**{get_user_model().USERNAME_FIELD: username}).first()


def _named(username: str | None) -> Any:
    """The account a sign-in names, or a stand-in User (never saved) so that an unknown name is recorded too."""
    user = _user_named(username)
    if user is None:
        user = get_user_model()(**{get_user_model().USERNAME_FIELD: (username or "")[:150]})
        user.pk = None
    return user


def on_signed_in(sender: Any, request: Any = None, user: Any = None, **kwargs: Any) -> None:
    audit_event(instance=user, action=LogEntry.Action.ACCESS, event=SIGN_IN, actor=user,
                remote_addr=_address(request))


def on_sign_in_failed(sender: Any, credentials: dict | None = None, request: Any = None, **kwargs: Any) -> None:
    username = (credentials or {}).get("username")
    audit_event(instance=_named(username), action=LogEntry.Action.ACCESS, event=SIGN_IN_FAILED,
                extra={"username": (username or "")[:150]}, remote_addr=_address(request))


def on_locked_out(sender: Any, request: Any = None, username: str | None = None, ip_address: str | None = None,
                  **kwargs: Any) -> None:
    audit_event(instance=_named(username), action=LogEntry.Action.ACCESS, event=LOCKOUT,
                extra={"username": (username or "")[:150]}, remote_addr=ip_address or _address(request))


def on_document_changed(sender: Any, document: Any, action: str, changes: dict, **kwargs: Any) -> None:
    audit_event(instance=document, action=LogEntry.Action.UPDATE, event=f"document {action}",
                changes={k: [str(v[0]), str(v[1])] for k, v in changes.items()})


def on_chunk_edited(sender: Any, chunk: Any, user: Any, before: str, after: str, reason: str,
                    **kwargs: Any) -> None:
    audit_event(instance=chunk, action=LogEntry.Action.UPDATE, event="chunk edit", actor=user,
                changes={"content": [before, after]}, extra={"reason": reason, "document": chunk.document_id})


def connect() -> None:
    user_logged_in.connect(on_signed_in, dispatch_uid="audit-sign-in")
    user_login_failed.connect(on_sign_in_failed, dispatch_uid="audit-sign-in-failed")
    user_locked_out.connect(on_locked_out, dispatch_uid="audit-lockout")
    document_changed.connect(on_document_changed, dispatch_uid="audit-document-changed")
    chunk_edited.connect(on_chunk_edited, dispatch_uid="audit-chunk-edited")
