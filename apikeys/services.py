"""Issuing, revoking and checking API keys.

The secret is 256 random bits, so it is stored as a plain SHA-256 digest: a slow password hasher (Django's
PBKDF2 takes about half a second by design) protects guessable passwords, and would only add that half
second to every request made with a key that no one can guess anyway. The digest is compared with
hmac.compare_digest so the comparison takes the same time wherever the first differing byte is.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from django.db import transaction
from django.utils import timezone

from apikeys.models import ApiKey, KeyScope
from apikeys.tickets import is_widget_key, ticket_is_valid
from kb import access

PREFIX = "dmk_"
PREFIX_CHARS = 12  # hex: finds the row; shown in lists to tell keys apart
# Writing the last use on every request would make each one a write; a minute's precision is enough to see
# whether a key is still in use.
LAST_USED_PRECISION = timedelta(minutes=1)


class KeyRequestError(ValueError):
    """A request to issue a key that cannot be honoured: the message says why."""


class KeyForbidden(KeyRequestError):
    """The creator may see the base but not hand out access to it (answered 403)."""


class KeyInvalid(LookupError):
    """Unknown, revoked or expired key, or its creator is gone: answered 401, all alike."""


@dataclass(frozen=True)
class Issued:
    key: ApiKey
    secret: str  # the whole key, shown once


def _digest(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def can_issue_keys(user: Any) -> bool:
    """Administrators and editors of at least one base (a key reaches only bases its creator edits)."""
    return access.key_scope(user) is None and access.is_kb_editor(user)


def normalise_origin(value: Any) -> str:
    """`scheme://host[:port]`, lower case, as a browser sends it in Origin; ValueError for anything else."""
    if not isinstance(value, str):
        raise ValueError("an origin is text such as https://intranet.example.com")
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/") \
            or parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError(f"not an origin (scheme://host[:port]): {value!r}")
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"not an origin (scheme://host[:port]): {value!r}") from None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme}://{host}" + (f":{port}" if port else "")


def key_create(*, creator: Any, name: str, kb_ids: list[int], scope: str, expires_at: datetime | None = None,
               allowed_origins: list[str] | None = None) -> Issued:
    """A new key for `creator`, reaching `kb_ids` (each one the creator edits). Raises access.KbNotFound for a
    base the creator cannot even see, KeyForbidden for one it sees but does not edit, KeyRequestError otherwise."""
    name = (name or "").strip()
    if not name or len(name) > 128:
        raise KeyRequestError("name must be 1–128 characters")
    if scope not in KeyScope.values:
        raise KeyRequestError("scope must be read or ask")
    if not kb_ids:
        raise KeyRequestError("kbs must name at least one knowledge base")
    wanted = frozenset(int(i) for i in kb_ids)
    if not wanted <= access.askable_kb_ids(creator):
        raise access.KbNotFound("no such knowledge base")
    if not wanted <= access.editable_kb_ids(creator):
        raise KeyForbidden("a key can only reach knowledge bases you edit")
    if expires_at is not None and expires_at <= timezone.now():
        raise KeyRequestError("expires_at must be in the future")
    origins: list[str] = []
    for value in allowed_origins or []:
        try:
            origin = normalise_origin(value)
        except ValueError as exc:
            raise KeyRequestError(str(exc)) from None
        if origin not in origins:
            origins.append(origin)
    if origins and scope != KeyScope.ASK:
        # The widget's key is in a public page: whoever reads the page holds it, so it may only ask.
        raise KeyRequestError("a widget key (with allowed_origins) must have scope ask")
    prefix = secrets.token_hex(PREFIX_CHARS // 2)
    secret = f"{PREFIX}{prefix}_{secrets.token_urlsafe(32)}"
    with transaction.atomic():
        key = ApiKey.objects.create(name=name, prefix=prefix, key_hash=_digest(secret), created_by=creator,
                                    scope=scope, expires_at=expires_at, allowed_origins=origins)
        key.kbs.set(sorted(wanted))
    return Issued(key=key, secret=secret)


def keys_visible_to(user: Any):
    """The keys `user` may list and revoke: an administrator all of them, anyone else its own."""
    rows = ApiKey.objects.select_related("created_by").prefetch_related("kbs")
    return rows if access.is_kb_admin(user) else rows.filter(created_by_id=user.pk)


def key_revoke(*, user: Any, key_id: int) -> bool:
    """Revoke one key `user` may manage; False when there is none (unknown and someone else's alike)."""
    key = keys_visible_to(user).filter(pk=key_id).first()
    if key is None:
        return False
    if key.revoked_at is None:
        ApiKey.objects.filter(pk=key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    return True


def key_lookup(raw: str) -> ApiKey:
    """The usable key whose secret is `raw`; KeyInvalid otherwise (unknown, revoked, expired alike)."""
    if not isinstance(raw, str) or not raw.startswith(PREFIX) or len(raw) < len(PREFIX) + PREFIX_CHARS + 2:
        raise KeyInvalid("invalid API key")
    prefix = raw[len(PREFIX):len(PREFIX) + PREFIX_CHARS]
    key = ApiKey.objects.select_related("created_by").filter(prefix=prefix).first()
    if key is None or not hmac.compare_digest(key.key_hash, _digest(raw)) or not key.is_usable():
        raise KeyInvalid("invalid API key")
    return key


def key_principal(key: ApiKey) -> Any:
    """The user a request made with `key` acts as: its creator, carrying the key's scope so that every access
    check is cut to the key's bases (kb.access). KeyInvalid when the creator is deactivated or gone."""
    # Loaded with the key by key_lookup (one query); kb.access reads roles and grants afresh anyway.
    user = key.created_by
    if not user.is_active:
        raise KeyInvalid("invalid API key")
    kb_ids = frozenset(ApiKey.kbs.through.objects.filter(apikey_id=key.pk).values_list("knowledgebase_id", flat=True))
    setattr(user, access.KEY_SCOPE_ATTR, access.KeyScope(key_id=key.pk, kb_ids=kb_ids, scope=key.scope))
    now = timezone.now()
    if key.last_used_at is None or now - key.last_used_at >= LAST_USED_PRECISION:
        ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
    return user


def authenticate_key(raw: str, *, widget_ticket: str | None = None) -> tuple[Any, ApiKey]:
    """(the acting user, the key) for a presented secret; KeyInvalid when it is not usable. A widget key (one
    with allowed origins, whose secret is public) is usable only with the ticket its frame was served with."""
    key = key_lookup(raw)
    if is_widget_key(key) and not ticket_is_valid(key, widget_ticket):
        raise KeyInvalid("invalid API key")
    return key_principal(key), key
