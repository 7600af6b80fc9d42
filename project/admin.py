"""User admin (each user's role set with one field; staff access follows; sessions ended) and external MCP servers."""
from __future__ import annotations

import logging

from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.forms import UserChangeForm
from django.contrib.auth.models import Group, Permission
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from docmind.models import McpServer
from docmind.roles import MEMBER, ROLES, user_set_role
from kb.access import is_kb_admin
from sso.sessions import user_sessions_end_all

User = get_user_model()
# Who registered or changed which external MCP server, beside the admin's own LogEntry history.
audit_log = logging.getLogger("docmind.audit")


class RoleChangeForm(UserChangeForm):
    role = forms.ChoiceField(label=_("Role"), choices=[(r, r) for r in ROLES], required=True,
                             help_text=_("admin: everything · kb_editor: documents and domains · member: chat only"))

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            current = self.instance.groups.filter(name__in=ROLES).values_list("name", flat=True).first()
            self.fields["role"].initial = current or MEMBER


class DocMindUserAdmin(UserAdmin):
    form = RoleChangeForm
    list_display = ["username", "email", "role", "is_active", "last_login", "date_joined"]
    list_filter = ["groups", "is_active", "is_superuser"]
    fieldsets = [
        (None, {"fields": ["username", "password"]}),
        (_("Personal info"), {"fields": ["first_name", "last_name", "email"]}),
        (_("Role"), {"fields": ["role", "is_active", "is_superuser"]}),
        (_("Important dates"), {"fields": ["last_login", "date_joined"]}),
    ]

    actions = ["end_sessions"]

    @admin.action(description=_("End all sessions and revoke the API token"))
    def end_sessions(self, request, queryset) -> None:
        if not is_kb_admin(request.user):
            self.message_user(request, _("Only administrators may end other users' sessions."), level="error")
            return
        ended = sum(user_sessions_end_all(user=user, keep_session_key=request.session.session_key)
                    for user in queryset)
        audit_log.info("%s ended %d session(s) of %s", request.user, ended, ", ".join(u.username for u in queryset))
        self.message_user(request, _("%(count)d session(s) ended.") % {"count": ended})

    @admin.display(description=_("role"))
    def role(self, obj) -> str:
        return ", ".join(g.name for g in obj.groups.all()) or "—"

    def save_related(self, request, form, formsets, change) -> None:
        super().save_related(request, form, formsets, change)
        # New users start as members; the change form's role picker decides afterwards.
        user_set_role(user=form.instance, role=form.cleaned_data.get("role") or MEMBER)

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("groups")


admin.site.unregister(User)
admin.site.register(User, DocMindUserAdmin)

# Django stores a permission's name in English when it creates the row; the built-in four are named again
# from their action and the model's (translated) verbose name.
_BUILTIN_PERMISSIONS = {"add": _("Can add %(model)s"), "change": _("Can change %(model)s"),
                        "delete": _("Can delete %(model)s"), "view": _("Can view %(model)s")}


def permission_label(permission: Permission) -> str:
    """`app | model | Can add model` in the user's language, as Django shows it in English."""
    model = permission.content_type.model_class()
    action, _sep, codename_model = permission.codename.partition("_")
    if model is not None and action in _BUILTIN_PERMISSIONS and codename_model == model._meta.model_name:
        name = _BUILTIN_PERMISSIONS[action] % {"model": model._meta.verbose_name}
    else:
        name = gettext(permission.name)
    return f"{permission.content_type} | {name}"


class PermissionChoiceField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, obj: Permission) -> str:
        return permission_label(obj)


class DocMindGroupAdmin(GroupAdmin):
    def formfield_for_manytomany(self, db_field, request=None, **kwargs):
        if db_field.name == "permissions":
            kwargs["form_class"] = PermissionChoiceField
        return super().formfield_for_manytomany(db_field, request=request, **kwargs)


admin.site.unregister(Group)
admin.site.register(Group, DocMindGroupAdmin)


@admin.register(McpServer)
class McpServerAdmin(admin.ModelAdmin):
    """External MCP servers: credentials are environment variable names, never values."""

    list_display = ["name", "enabled", "transport", "endpoint", "tool_count", "timeout_seconds", "updated_at"]
    list_filter = ["enabled", "transport"]
    fieldsets = [
        (None, {"fields": ["name", "enabled", "transport"]}),
        (_("Where"), {"fields": ["url", "header_env", "command", "args", "env_names"],
                      "description": _("Credentials come only from environment variables named "
                                       "DOCMIND_MCP_SECRET_…. Commands (stdio) and URLs of loopback, link-local "
                                       "or private addresses are refused unless the operator sets "
                                       "DOCMIND_MCP_STDIO or DOCMIND_MCP_ALLOW_PRIVATE_URLS.")}),
        (_("What the agentic loop may use"), {"fields": ["allowed_tools", "timeout_seconds", "result_max_tokens",
                                                         "tool_limits"]}),
    ]

    @admin.display(description=_("URL / command"))
    def endpoint(self, obj: McpServer) -> str:
        return obj.url if obj.transport == "http" else obj.command

    @admin.display(description=_("allowed tools"))
    def tool_count(self, obj: McpServer) -> int:
        return len(obj.allowed_tools or [])

    def save_model(self, request, obj: McpServer, form, change: bool) -> None:
        # heavy: the MCP client and anyio (8 ms) load only when a server is saved; django.setup() loads this module
        from chat.agentic.external import forget_listings

        super().save_model(request, obj, form, change)
        forget_listings()  # a changed allowlist or URL is used from the next turn on
        audit_log.warning("external MCP server %r %s by %r: enabled=%s transport=%s url=%r command=%r args=%r "
                          "header_env=%r env_names=%r allowed_tools=%r", obj.name, "changed" if change else "added",
                          request.user.get_username(), obj.enabled, obj.transport, obj.url, obj.command, obj.args,
                          sorted(obj.header_env.values()), obj.env_names, obj.allowed_tools)

    def delete_model(self, request, obj: McpServer) -> None:
        audit_log.warning("external MCP server %r deleted by %r", obj.name, request.user.get_username())
        super().delete_model(request, obj)

    def delete_queryset(self, request, queryset) -> None:
        for server in queryset:
            audit_log.warning("external MCP server %r deleted by %r", server.name, request.user.get_username())
        super().delete_queryset(request, queryset)


def _lockout_pages_without_date_drilldown() -> None:
    """django-axes' admin pages drill down by attempt date; on MySQL/MariaDB that needs the server's time-zone
    tables, which a default install lacks, and the page then fails with a server error. The lists stay sortable
    and filterable by date without it."""
    for model in (AccessAttempt, AccessFailureLog, AccessLog):
        model_admin = admin.site._registry.get(model)
        if model_admin is not None:
            model_admin.date_hierarchy = None


_lockout_pages_without_date_drilldown()
