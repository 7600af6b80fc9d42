"""Roles as Django groups: admin (everything), kb_editor (documents and domains), member (chat)."""
from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from rest_framework.permissions import BasePermission

ADMIN, KB_EDITOR, MEMBER = "admin", "kb_editor", "member"
ROLES = (ADMIN, KB_EDITOR, MEMBER)
STAFF_ROLES = {ADMIN, KB_EDITOR}

# Apps whose every model permission a kb_editor holds (documents, chunks, domains).
KB_EDITOR_APPS = ("kb", "curation", "review")


def has_role(user: AbstractBaseUser | AnonymousUser, *roles: str) -> bool:
    if not user or not user.is_authenticated:
        return False
    if user.is_superuser:
        return True
    names = getattr(user, "_docmind_roles", None)
    if names is None:
        names = set(user.groups.values_list("name", flat=True))
        user._docmind_roles = names
    return bool(names.intersection(roles))


def can_edit_kb(user: AbstractBaseUser | AnonymousUser) -> bool:
    return has_role(user, ADMIN, KB_EDITOR)


def sync_role_permissions(sender: Any = None, **kwargs: Any) -> None:
    """Give each role group its permissions; runs after every migrate, so new models are covered."""
    from django.contrib.auth.models import Group, Permission

    groups = {g.name: g for g in Group.objects.filter(name__in=ROLES)}
    if len(groups) != len(ROLES):
        return  # the roles migration has not run yet
    _grant(groups, Permission)


def ensure_roles() -> None:
    """Create any missing role group and grant the permissions (idempotent)."""
    from django.contrib.auth.models import Group, Permission

    _grant({name: Group.objects.get_or_create(name=name)[0] for name in ROLES}, Permission)


def _grant(groups: dict, permission_model: Any) -> None:
    groups[ADMIN].permissions.set(permission_model.objects.all())
    groups[KB_EDITOR].permissions.set(permission_model.objects.filter(content_type__app_label__in=KB_EDITOR_APPS))
    groups[MEMBER].permissions.clear()


def user_set_role(*, user: AbstractBaseUser, role: str) -> None:
    """Put `user` in exactly one role group; staff access to the admin follows the role."""
    from django.contrib.auth.models import Group

    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; expected one of {', '.join(ROLES)}")
    user.groups.set([Group.objects.get(name=role)])
    user.is_staff = role in STAFF_ROLES or user.is_superuser
    user.save(update_fields=["is_staff"])
    if hasattr(user, "_docmind_roles"):
        del user._docmind_roles


class IsKbEditor(BasePermission):
    message = "Only administrators and knowledge-base editors may change documents."

    def has_permission(self, request, view) -> bool:
        return can_edit_kb(request.user)


class IsKbEditorOrReadOnly(BasePermission):
    message = IsKbEditor.message

    def has_permission(self, request, view) -> bool:
        if not (request.user and request.user.is_authenticated):
            return False
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return True
        return can_edit_kb(request.user)


class IsAdminRole(BasePermission):
    message = "Only administrators may do this."

    def has_permission(self, request, view) -> bool:
        return has_role(request.user, ADMIN)
