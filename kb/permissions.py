"""The REST API's permission classes and user-taking object getters, each a thin call into kb.access.

Every API module takes its refusals from here rather than from another API module, and none of them decides
anything itself: kb.access does, as it does for the admin, MCP and the WebSocket consumer.
"""
from __future__ import annotations

from typing import Any

from django.http import Http404
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import SAFE_METHODS, BasePermission

from kb import access
from kb.models import KnowledgeBase


class IsAdministrator(BasePermission):
    """Administrators only (the admin role or a superuser, never through an API key)."""

    message = gettext_lazy("Only administrators may do this.")

    def has_permission(self, request, view) -> bool:
        return access.is_kb_admin(request.user)


class IsKbEditor(BasePermission):
    """Editors of at least one knowledge base and administrators; each view then cuts its rows to the bases the
    caller edits."""

    message = gettext_lazy("Only editors of a knowledge base and administrators may do this.")

    def has_permission(self, request, view) -> bool:
        return access.is_kb_editor(request.user)


class HasEditorRoleOrReadOnly(BasePermission):
    """Reads for anyone signed in (the view cuts them to the readable bases); writes for the admin and kb_editor
    roles, whose view then asks about the base itself (404 unreadable, 403 read-only)."""

    message = gettext_lazy("Only administrators and knowledge-base editors may change documents.")

    def has_permission(self, request, view) -> bool:
        if not (request.user and request.user.is_authenticated):
            return False
        return request.method in SAFE_METHODS or access.has_editor_role(request.user)


class EditsObjectKb(BasePermission):
    """Object level: reading an object is settled by the view's queryset (readable bases only, so anything else
    answers 404); changing it needs edit access to its base. A view may name its refusal per method in
    `edit_refusals`."""

    message = gettext_lazy("Changing this needs edit access to its knowledge base.")

    def has_object_permission(self, request, view, obj: Any) -> bool:
        if request.method in SAFE_METHODS:
            return True
        refusal = getattr(view, "edit_refusals", {}).get(request.method.lower())
        if refusal is not None:
            self.message = refusal
        return obj.kb_id in access.editable_kb_ids(request.user)


class IsStaff(BasePermission):
    message = gettext_lazy("Only staff may do this.")

    def has_permission(self, request, view) -> bool:
        return access.is_staff(request.user)


def visible_kb(user: Any, pk: int) -> KnowledgeBase:
    """The knowledge base `pk` if `user` may at least ask it (a view grant); Http404 otherwise."""
    if pk not in access.askable_kb_ids(user):
        raise Http404(_("No such knowledge base."))
    return KnowledgeBase.objects.get(pk=pk)


def require_kb_edit(user: Any, kb_id: int, *, not_found: str | None = None, refusal: str | None = None) -> None:
    """Raises unless `user` may edit the knowledge base `kb_id`: Http404 for one it cannot see at all (it never
    learns that the base exists), PermissionDenied for one it sees (a view grant too) but may not change. An app
    guarding a row of a base names that row in `not_found` (an evaluation set, say) and may say in `refusal` what
    the edit would have been."""
    if kb_id in access.editable_kb_ids(user):
        return
    if kb_id not in access.askable_kb_ids(user):
        raise Http404(not_found or _("No such knowledge base."))
    raise PermissionDenied(refusal or _("You may read this knowledge base but not change it."))


def editable_kb(user: Any, pk: int, *, refusal: str | None = None) -> KnowledgeBase:
    """The knowledge base `pk` if `user` may edit it; require_kb_edit's 404 and 403 otherwise."""
    require_kb_edit(user, pk, refusal=refusal)
    return KnowledgeBase.objects.get(pk=pk)


def editor_kb_ids(user: Any, message: str) -> frozenset[int]:
    """The bases `user` edits; PermissionDenied with `message` when it edits none."""
    editable = access.editable_kb_ids(user)
    if not editable:
        raise PermissionDenied(message)
    return editable
