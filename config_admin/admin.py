"""Admin for AI configuration: grouped by category, validated per key, with change history."""
from __future__ import annotations

from django import forms
from django.contrib import admin
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from config_admin.models import SysAiConfig, SysAiConfigChange
from config_admin.registry import ConfigValueError, UnknownConfigKey, spec
from config_admin.services import config_set
from docmind.sandbox import runner_status


class SysAiConfigForm(forms.ModelForm):
    class Meta:
        model = SysAiConfig
        fields = ["value"]

    def clean_value(self) -> str:
        value = self.cleaned_data["value"]
        try:
            item = spec(self.instance.key)
            return item.canonical_for_write(value)
        except (ConfigValueError, UnknownConfigKey) as exc:
            raise forms.ValidationError(str(exc)) from None


class ChangeInline(admin.TabularInline):
    model = SysAiConfigChange
    extra = 0
    can_delete = False
    fields = ["changed_at", "changed_by", "old_value", "new_value"]
    readonly_fields = fields
    verbose_name_plural = _("History of changes")

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(SysAiConfig)
class SysAiConfigAdmin(admin.ModelAdmin):
    form = SysAiConfigForm
    list_display = ["category", "key", "value", "value_type", "described", "updated_at", "updated_by"]
    list_display_links = ["key"]
    list_filter = ["category"]
    search_fields = ["key", "description"]
    ordering = ["category", "key"]
    readonly_fields = ["key", "value_type", "category", "described", "allowed", "updated_at", "updated_by"]
    fields = ["key", "category", "described", "value_type", "allowed", "value", "updated_at", "updated_by"]
    inlines = [ChangeInline]
    list_per_page = 200


    @admin.display(description=_("description"))
    def described(self, obj: SysAiConfig) -> str:
        """The key's description from the code, in the user's language (the row keeps the English text)."""
        try:
            return gettext(spec(obj.key).description)
        except UnknownConfigKey:
            return obj.description

    @admin.display(description=_("allowed values"))
    def allowed(self, obj: SysAiConfig) -> str:
        try:
            item = spec(obj.key)
        except UnknownConfigKey:
            return str(_("unknown key"))
        if item.key == "sandbox.enabled":
            status = runner_status()
            return (gettext("bool (the sandbox runner is available)") if status.available
                    else gettext("false only: %(reason)s") % {"reason": status.reason})
        if item.choices:
            return " | ".join(item.choices)
        bounds = []
        if item.minimum is not None:
            bounds.append(f"≥ {item.minimum:g}")
        if item.maximum is not None:
            bounds.append(f"≤ {item.maximum:g}")
        return f"{item.value_type} {' '.join(bounds)}".strip()

    def has_add_permission(self, request) -> bool:
        return False  # keys are declared in code and seeded by migrations

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def save_model(self, request, obj: SysAiConfig, form, change: bool) -> None:
        config_set(key=obj.key, value=form.cleaned_data["value"], user=request.user)
