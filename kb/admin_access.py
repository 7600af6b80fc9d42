"""The admin's view of the knowledge-base tables, cut by kb.access exactly as the API's reads are.

Each knowledge-base admin names the lookup from its rows to their base (`kb_scope`); its lists, change
views, searches, filters, pickers and actions see only the rows of bases the user may read, and change
only those of bases the user may edit. Nothing here decides who may read what: kb.access does.
"""
from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.utils.translation import gettext_lazy as _

from kb import access


class ReadableKbFilter(admin.RelatedFieldListFilter):
    """A knowledge-base filter offering only the bases the user may read (the plain one names every base)."""

    def field_choices(self, field, request, model_admin):
        return [(kb.pk, str(kb)) for kb in access.readable_kbs(request.user)]


class EditableKbFilter(admin.RelatedFieldListFilter):
    """A knowledge-base filter offering only the bases the user may edit, for lists cut to those bases."""

    def field_choices(self, field, request, model_admin):
        return [(kb.pk, str(kb)) for kb in access.editable_kbs(request.user)]


class KbScopedAdmin(admin.ModelAdmin):
    """Rows of readable bases only; change and delete on rows of editable bases only."""

    # The lookup from a row to its knowledge base's id.
    kb_scope = "kb_id"

    def get_queryset(self, request):
        return access.scope_readable(super().get_queryset(request), request.user, via=self.kb_scope)

    def kb_id_of(self, obj: Any) -> int | None:
        value: Any = obj
        for part in self.kb_scope.split("__"):
            value = getattr(value, part, None)
        return value

    def may_edit(self, request, obj: Any) -> bool:
        """Whether `request.user` may change `obj` (None: whether it may edit any base at all)."""
        if obj is None:
            return access.is_kb_editor(request.user)
        return self.kb_id_of(obj) in access.editable_kb_ids(request.user)

    def has_change_permission(self, request, obj=None) -> bool:
        return super().has_change_permission(request, obj) and self.may_edit(request, obj)

    def has_delete_permission(self, request, obj=None) -> bool:
        return super().has_delete_permission(request, obj) and self.may_edit(request, obj)

    def editable_only(self, request, queryset):
        """An action's selection cut to the rows the user may change (the others it may only read)."""
        return access.scope_editable(queryset, request.user, via=self.kb_scope)


class HolderByName(forms.ModelChoiceField):
    """A user or group typed by its name, as the grants API takes it: a kb_editor grants access to a name it
    knows without the admin listing every account and group."""

    widget = forms.TextInput

    def __init__(self, queryset, *, name_field: str, **kwargs) -> None:
        kwargs.setdefault("widget", forms.TextInput(attrs={"size": 16}))
        super().__init__(queryset, to_field_name=name_field, **kwargs)
        self.error_messages["invalid_choice"] = (_("No such user.") if name_field == "username"
                                                 else _("No such group."))

    def prepare_value(self, value):
        # A bound grant's initial value is the holder's id: show its name instead.
        if isinstance(value, int):
            holder = self.queryset.model.objects.filter(pk=value).first()
            return getattr(holder, self.to_field_name, "") if holder else ""
        return super().prepare_value(value)


def grant_holder_field(db_field, request) -> forms.Field | None:
    """The grant form's user or group field: an administrator picks from every account and group (it manages
    them anyway); anyone else types a name."""
    if access.is_kb_admin(request.user):
        return None  # the admin's own select
    if db_field.name == "user":
        model = get_user_model()
        return HolderByName(model.objects.all(), name_field=model.USERNAME_FIELD, required=False,
                            label=db_field.verbose_name)
    if db_field.name == "group":
        return HolderByName(Group.objects.all(), name_field="name", required=False, label=db_field.verbose_name)
    return None
