"""Who may read and edit which knowledge base: roles (admin / kb_editor / member) meet grants.

Every answer is computed from the database on each call (never from a per-connection cache), so a
role or grant change is seen by the next request or chat turn in every process.
"""
from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet

from docmind.roles import ADMIN, KB_EDITOR
from kb.models import KbAccess, KbGrant, KnowledgeBase


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
    fresh = _fresh_roles(user)
    return fresh is not None and (fresh[0] or ADMIN in fresh[1])


def readable_kb_ids(user: Any) -> frozenset[int]:
    """Ids of the knowledge bases `user` may read: all for an admin, else those granted (read or edit)
    to the user or to one of its groups. Empty for anonymous or inactive users."""
    fresh = _fresh_roles(user)
    if fresh is None:
        return frozenset()
    superuser, roles, group_ids = fresh
    if superuser or ADMIN in roles:
        return frozenset(KnowledgeBase.objects.values_list("id", flat=True))
    return frozenset(_grants_of(user.pk, group_ids).values_list("kb_id", flat=True))


def editable_kb_ids(user: Any) -> frozenset[int]:
    """Knowledge bases `user` may upload to, delete from and manage grants of: all for an admin; for a
    kb_editor those with an `edit` grant; none for a member, whatever grant it holds."""
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
    fresh = _fresh_roles(user)
    return fresh is not None and (fresh[0] or bool(fresh[1] & {ADMIN, KB_EDITOR}))


def readable_kbs(user: Any) -> QuerySet[KnowledgeBase]:
    return KnowledgeBase.objects.filter(pk__in=readable_kb_ids(user)).order_by("-is_default", "name", "id")


def requested_kb_ids(user: Any, requested: Any) -> frozenset[int]:
    """The filter of one request: every readable KB when `requested` is None, else the requested ids,
    each of which must be readable. Raises KbNotFound (answered 404) for an id that is not, and
    ValueError for something that is not a list of integer ids."""
    readable = readable_kb_ids(user)
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
