"""Roles as Django groups: admin (everything), kb_editor (documents and domains), member (chat).

`roles_of` is the one place that reads which roles a user holds: kb.access (knowledge bases, and the API's,
admin's, MCP's and WebSocket's decisions built on it) asks here. It reads the database on every call, never a
copy kept on the user object, because a WebSocket or MCP session keeps its user for hours and a role change must
reach it on the next turn. Within one HTTP request (`request_roles_middleware`) a user is read once: an upload
asked three times, two database reads each, for an answer that cannot change in between unless the request
itself changes it, which forgets what was read.
"""
from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from asgiref.sync import iscoroutinefunction
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Group, Permission
from django.http import HttpRequest, HttpResponse
from django.utils.decorators import sync_and_async_middleware

ADMIN, KB_EDITOR, MEMBER = "admin", "kb_editor", "member"
ROLES = (ADMIN, KB_EDITOR, MEMBER)
STAFF_ROLES = {ADMIN, KB_EDITOR}

# Apps whose every model permission a kb_editor holds (documents, chunks, domains).
KB_EDITOR_APPS = ("kb", "curation", "review")


@dataclass(frozen=True)
class UserRoles:
    """One read of an active user's standing: superuser and staff flags, role names, and the ids of all its
    groups (role groups and the others: knowledge-base grants go to groups)."""

    superuser: bool
    staff: bool
    names: frozenset[str]
    group_ids: tuple[int, ...]

    def holds(self, *roles: str) -> bool:
        """Whether the user holds one of `roles`; a superuser holds every role."""
        return self.superuser or bool(self.names.intersection(roles))


def roles_of(user: AbstractBaseUser | AnonymousUser | None) -> UserRoles | None:
    """`user`'s roles, read now; None for an anonymous, deleted or deactivated user (who holds none)."""
    if user is None or not getattr(user, "is_authenticated", False) or user.pk is None:
        return None
    read = _read_in_request.get()
    if read is not None and user.pk in read:
        return read[user.pk]
    model = get_user_model()
    row = model.objects.filter(pk=user.pk, is_active=True).values_list("is_superuser", "is_staff").first()
    roles = None
    if row is not None:
        groups = list(model.groups.through.objects.filter(user_id=user.pk).values_list("group_id", "group__name"))
        roles = UserRoles(superuser=bool(row[0]), staff=bool(row[1]),
                          names=frozenset(name for _, name in groups if name in ROLES),
                          group_ids=tuple(gid for gid, _ in groups))
    if read is not None:
        read[user.pk] = roles
    return roles


# The roles read during the current HTTP request, by user id; None outside one (a WebSocket turn, an MCP call,
# a command, a worker thread), where every call reads the database.
_read_in_request: ContextVar[dict[Any, UserRoles | None] | None] = ContextVar("docmind_roles_read", default=None)


@sync_and_async_middleware
def request_roles_middleware(get_response: Callable) -> Callable:
    """Each user's roles read at most once per request (see the module's docstring)."""
    if iscoroutinefunction(get_response):
        async def async_middleware(request: HttpRequest) -> HttpResponse:
            token = _read_in_request.set({})
            try:
                return await get_response(request)
            finally:
                _read_in_request.reset(token)
        return async_middleware

    def middleware(request: HttpRequest) -> HttpResponse:
        token = _read_in_request.set({})
        try:
            return get_response(request)
        finally:
            _read_in_request.reset(token)
    return middleware


def forget_read_roles(**kwargs: Any) -> None:
    """Signal receiver: a user, its flags or its groups changed, so this request reads roles again."""
    read = _read_in_request.get()
    if read is not None:
        read.clear()


def has_role(user: AbstractBaseUser | AnonymousUser | None, *roles: str) -> bool:
    found = roles_of(user)
    return found is not None and found.holds(*roles)


def sync_role_permissions(sender: Any = None, **kwargs: Any) -> None:
    """Give each role group its permissions; runs after every migrate, so new models are covered."""
    groups = {g.name: g for g in Group.objects.filter(name__in=ROLES)}
    if len(groups) != len(ROLES):
        return  # the roles migration has not run yet
    _grant(groups, Permission)


def ensure_roles() -> None:
    """Create any missing role group and grant the permissions (idempotent)."""
    _grant({name: Group.objects.get_or_create(name=name)[0] for name in ROLES}, Permission)


def _grant(groups: dict, permission_model: Any) -> None:
    groups[ADMIN].permissions.set(permission_model.objects.all())
    groups[KB_EDITOR].permissions.set(permission_model.objects.filter(content_type__app_label__in=KB_EDITOR_APPS))
    groups[MEMBER].permissions.clear()


def user_set_role(*, user: AbstractBaseUser, role: str) -> None:
    """Put `user` in exactly one role group; staff access to the admin follows the role."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; expected one of {', '.join(ROLES)}")
    user.groups.set([Group.objects.get(name=role)])
    user.is_staff = role in STAFF_ROLES or user.is_superuser
    user.save(update_fields=["is_staff"])
