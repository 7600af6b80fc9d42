"""Who may read and edit which knowledge base: roles (admin / kb_editor / member) meet grants.

Three levels, each including the one below: `view` (ask: answers and their citation snippets), `read`
(also the originals: document lists, the reader, downloads, the admin) and `edit`. `readable_*` means
`read` or more, as it always did, so a caller that shows originals never sees a view-only base;
`askable_*` adds the view-only bases, and only the answering paths (chat, retrieve, MCP search, the
list of bases to ask) use it.

A request made with an API key carries a KeyScope on its user: every answer here is cut to the key's
bases (and an ask-only key reads no originals), and a key never edits, whatever its creator may.

Every answer is computed from the database on each call (never from a per-connection cache), so a
role or grant change is seen by the next request or chat turn in every process.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Q, QuerySet

from docmind.roles import ADMIN, KB_EDITOR
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


def _fresh_roles(user: Any) -> tuple[bool, set[str], list[int]] | None:
    """(superuser, role names, group ids) read now, since a WebSocket keeps its user object for hours;
    None for an anonymous, deleted or deactivated user."""
    from django.contrib.auth import get_user_model

    if not getattr(user, "is_authenticated", False) or user.pk is None:
        return None
    row = get_user_model().objects.filter(pk=user.pk, is_active=True).values_list("is_superuser", flat=True).first()
    if row is None:
        return None
    groups = list(get_user_model().groups.through.objects.filter(user_id=user.pk)
                  .values_list("group_id", "group__name"))
    return bool(row), {name for _, name in groups}, [gid for gid, _ in groups]


def _grants_of(user_id: int, group_ids: list[int]) -> QuerySet[KbGrant]:
    return KbGrant.objects.filter(Q(user_id=user_id) | Q(group_id__in=group_ids))


def is_kb_admin(user: Any) -> bool:
    if key_scope(user) is not None:
        return False  # a key acts within its bases only, never as its creator's role
    fresh = _fresh_roles(user)
    return fresh is not None and (fresh[0] or ADMIN in fresh[1])


def _granted_kb_ids(user: Any, levels: tuple[str, ...] | None) -> frozenset[int]:
    """Bases granted to `user` or its groups at one of `levels` (None: at any level), all for an admin;
    cut to the key's bases when `user` acts through an API key."""
    fresh = _fresh_roles(user)
    if fresh is None:
        return frozenset()
    superuser, roles, group_ids = fresh
    key = key_scope(user)
    if superuser or ADMIN in roles:
        rows = KnowledgeBase.objects.all()
        if key is not None:
            rows = rows.filter(pk__in=key.kb_ids)
        return frozenset(rows.values_list("id", flat=True))
    grants = _grants_of(user.pk, group_ids)
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
    fresh = _fresh_roles(user)
    if fresh is None:
        return frozenset()
    superuser, roles, group_ids = fresh
    if superuser or ADMIN in roles:
        return frozenset(KnowledgeBase.objects.values_list("id", flat=True))
    if KB_EDITOR not in roles:
        return frozenset()
    return frozenset(_grants_of(user.pk, group_ids).filter(access=KbAccess.EDIT).values_list("kb_id", flat=True))


def can_create_kb(user: Any) -> bool:
    if key_scope(user) is not None:
        return False
    fresh = _fresh_roles(user)
    return fresh is not None and (fresh[0] or bool(fresh[1] & {ADMIN, KB_EDITOR}))


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
