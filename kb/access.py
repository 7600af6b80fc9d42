"""Who may do what: roles (admin / kb_editor / member, read by docmind.roles.roles_of) meet grants.

Every permission decision is made here: the DRF permission classes and object getters (kb.permissions), the
admin classes, the MCP tools and the WebSocket consumer ask these functions rather than look at roles, groups
or flags themselves, so one rule holds on every path.

Three levels, each including the one below: `view` (ask: answers and their citation snippets), `read`
(also the originals: document lists, the reader, downloads, the admin) and `edit`. `readable_*` means
`read` or more, as it always did, so a caller that shows originals never sees a view-only base;
`askable_*` adds the view-only bases, and only the answering paths (chat, retrieve, MCP search, the
list of bases to ask) use it.

A request made with an API key carries a KeyScope on its user: every answer here is cut to the key's
bases (and an ask-only key reads no originals), and a key never edits, whatever its creator may.

Every answer is computed from the database on each call (never from a per-connection cache, nor from a copy
kept on the user object), so a role or grant change is seen by the next request or chat turn in every process.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db.models import Q, QuerySet

from docmind.roles import ADMIN, KB_EDITOR, roles_of
from kb.models import KbAccess, KbGrant, KnowledgeBase

KEY_SCOPE_ATTR = "docmind_key_scope"
ORIGINALS = (KbAccess.READ, KbAccess.EDIT)


@dataclass(frozen=True)
class KeyScope:
    """What an API key may reach: its bases, and `read` (as a read grant) or `ask` (as a view grant)."""

    key_id: int
    kb_ids: frozenset[int]
    scope: str

    @property
    def reads_originals(self) -> bool:
        return self.scope == "read"


def key_scope(user: Any) -> KeyScope | None:
    """The API key `user` acts through in this request, None for a person signed in."""
    scope = getattr(user, KEY_SCOPE_ATTR, None)
    return scope if isinstance(scope, KeyScope) else None


def _grants_of(user_id: int, group_ids: Iterable[int]) -> QuerySet[KbGrant]:
    return KbGrant.objects.filter(Q(user_id=user_id) | Q(group_id__in=group_ids))


def key_allows(user: Any, scopes: Iterable[str]) -> bool:
    """Whether `user` may act here: a person signed in may; an API key only where its scope is one of `scopes`
    (the REST views name theirs in `api_key_scopes`, which apikeys' Bearer authentication asks about; the MCP
    tools theirs in project.mcp.tools)."""
    key = key_scope(user)
    return key is None or key.scope in scopes


def is_active_user(user: Any) -> bool:
    """Signed in, and the account still exists and is active (read now: a WebSocket's user is a snapshot)."""
    return roles_of(user) is not None


def is_kb_admin(user: Any) -> bool:
    """An administrator (the admin role or a superuser): every base, the audit trail, other users' sessions."""
    if key_scope(user) is not None:
        return False  # a key acts within its bases only, never as its creator's role
    roles = roles_of(user)
    return roles is not None and roles.holds(ADMIN)


def has_editor_role(user: Any) -> bool:
    """The admin or kb_editor role: may create bases and send writes to the document API, whose views then
    ask editable_kb_ids about the base itself."""
    if key_scope(user) is not None:
        return False  # keys only read and ask
    roles = roles_of(user)
    return roles is not None and roles.holds(ADMIN, KB_EDITOR)


def is_kb_editor(user: Any) -> bool:
    """Edits at least one base (administrators edit all): the curation, review and evaluation pages and APIs."""
    return bool(editable_kb_ids(user))


def is_staff(user: Any) -> bool:
    """May enter the admin, read /metrics and the detail of /healthz: the staff flag, which user_set_role keeps
    equal to holding a staff role (or being a superuser). Never through an API key."""
    if key_scope(user) is not None:
        return False
    roles = roles_of(user)
    return roles is not None and roles.staff


def _granted_kb_ids(user: Any, levels: tuple[str, ...] | None) -> frozenset[int]:
    """Bases granted to `user` or its groups at one of `levels` (None: at any level), all for an admin;
    cut to the key's bases when `user` acts through an API key."""
    roles = roles_of(user)
    if roles is None:
        return frozenset()
    key = key_scope(user)
    if roles.holds(ADMIN):
        rows = KnowledgeBase.objects.all()
        if key is not None:
            rows = rows.filter(pk__in=key.kb_ids)
        return frozenset(rows.values_list("id", flat=True))
    grants = _grants_of(user.pk, roles.group_ids)
    if levels is not None:
        grants = grants.filter(access__in=levels)
    if key is not None:
        grants = grants.filter(kb_id__in=key.kb_ids)
    return frozenset(grants.values_list("kb_id", flat=True))


def readable_kb_ids(user: Any) -> frozenset[int]:
    """Ids of the knowledge bases whose originals `user` may read: all for an admin, else those granted read
    or edit to the user or to one of its groups (a view grant is not enough). Empty for anonymous or inactive
    users and for an ask-only API key."""
    key = key_scope(user)
    if key is not None and not key.reads_originals:
        return frozenset()
    return _granted_kb_ids(user, ORIGINALS)


def askable_kb_ids(user: Any) -> frozenset[int]:
    """Ids of the knowledge bases `user` may ask: the readable ones and those granted `view`. Only for paths
    that give answers and citation snippets, never originals."""
    return _granted_kb_ids(user, None)


def editable_kb_ids(user: Any) -> frozenset[int]:
    """Knowledge bases `user` may upload to, delete from and manage grants of: all for an admin; for a
    kb_editor those with an `edit` grant; none for a member, whatever grant it holds."""
    if key_scope(user) is not None:
        return frozenset()  # keys only read and ask
    roles = roles_of(user)
    if roles is None:
        return frozenset()
    if roles.holds(ADMIN):
        return frozenset(KnowledgeBase.objects.values_list("id", flat=True))
    if not roles.holds(KB_EDITOR):
        return frozenset()
    return frozenset(_grants_of(user.pk, roles.group_ids).filter(access=KbAccess.EDIT).values_list("kb_id", flat=True))


def readable_kbs(user: Any) -> QuerySet[KnowledgeBase]:
    return KnowledgeBase.objects.filter(pk__in=readable_kb_ids(user)).order_by("-is_default", "name", "id")


def askable_kbs(user: Any) -> QuerySet[KnowledgeBase]:
    return KnowledgeBase.objects.filter(pk__in=askable_kb_ids(user)).order_by("-is_default", "name", "id")


def requested_kb_ids(user: Any, requested: Any, *, ask: bool = False) -> frozenset[int]:
    """The filter of one request: every readable KB when `requested` is None, else the requested ids,
    each of which must be readable. Raises KbNotFound (answered 404) for an id that is not, and
    ValueError for something that is not a list of integer ids. `ask` widens "readable" to the askable
    bases, for the paths that only answer and cite."""
    readable = askable_kb_ids(user) if ask else readable_kb_ids(user)
    if requested is None:
        return readable
    if isinstance(requested, int | str) and not isinstance(requested, bool):
        requested = [requested]
    if not isinstance(requested, list | tuple) or not requested:
        raise ValueError("kb must be a non-empty list of knowledge-base ids")
    wanted: set[int] = set()
    for value in requested:
        if isinstance(value, bool) or not isinstance(value, int | str) or not str(value).strip().isdigit():
            raise ValueError("kb must be a list of integer ids")
        wanted.add(int(value))
    if not wanted <= readable:
        raise KbNotFound("no such knowledge base")
    return frozenset(wanted)


class KbNotFound(LookupError):
    """An id the caller cannot read: answered exactly like one that does not exist (404)."""


def kb_default() -> KnowledgeBase:
    """The default knowledge base, created with its readers when missing."""
    return KnowledgeBase.objects.default()


def scope_readable(queryset: QuerySet, user: Any, *, via: str = "kb_id") -> QuerySet:
    """`queryset` cut to the rows of knowledge bases `user` may read; `via` is the lookup from the row to its
    base's id (`document__kb_id` for chunks). The admin scopes every list, form and filter with this, as the API
    scopes its reads with readable_kb_ids: one answer to "who may read what"."""
    return queryset.filter(**{f"{via}__in": readable_kb_ids(user)})


def scope_editable(queryset: QuerySet, user: Any, *, via: str = "kb_id") -> QuerySet:
    """`queryset` cut to the rows of knowledge bases `user` may edit (see scope_readable)."""
    return queryset.filter(**{f"{via}__in": editable_kb_ids(user)})


def editable_kbs(user: Any) -> QuerySet[KnowledgeBase]:
    return KnowledgeBase.objects.filter(pk__in=editable_kb_ids(user)).order_by("-is_default", "name", "id")
