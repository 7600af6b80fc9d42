"""Curated answers in the admin: of the bases the user edits only; saved through the services (embedding)."""
from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.utils.translation import gettext_lazy as _

from curation import services
from curation.models import QaPair, QaSource
from kb import access
from kb.access import editable_kb_ids
from kb.admin_access import EditableKbFilter
from kb.models import Document, KnowledgeBase


class QaPairForm(forms.ModelForm):
    class Meta:
        model = QaPair
        fields = ["kb", "question", "answer", "documents", "is_active"]


@admin.register(QaPair)
class QaPairAdmin(admin.ModelAdmin):
    form = QaPairForm
    list_display = ["question_short", "kb", "is_active", "source", "author", "updated_at"]
    # Only the bases this user edits: a plain filter would name every base.
    list_filter = ["is_active", "source", ("kb", EditableKbFilter)]
    search_fields = ["question", "answer"]
    readonly_fields = ["author", "source", "created_at", "updated_at"]

    def get_queryset(self, request):
        return super().get_queryset(request).filter(kb_id__in=editable_kb_ids(request.user)).select_related(
            "kb", "author")

    def _editor(self, request) -> bool:
        return access.is_kb_editor(request.user)

    def has_module_permission(self, request) -> bool:
        return self._editor(request)

    def has_view_permission(self, request, obj=None) -> bool:
        return self._editor(request)

    def has_add_permission(self, request) -> bool:
        return self._editor(request)

    def has_change_permission(self, request, obj=None) -> bool:
        return self._editor(request) and (obj is None or obj.kb_id in editable_kb_ids(request.user))

    def has_delete_permission(self, request, obj=None) -> bool:
        return self.has_change_permission(request, obj)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "kb":
            kwargs["queryset"] = KnowledgeBase.objects.filter(pk__in=editable_kb_ids(request.user))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        if db_field.name == "documents":
            kwargs["queryset"] = Document.objects.filter(kb_id__in=editable_kb_ids(request.user))
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    @admin.display(description=_("question"))
    def question_short(self, pair: QaPair) -> str:
        return pair.question[:80]

    def save_model(self, request, obj: QaPair, form, change: bool) -> None:
        if obj.kb_id not in editable_kb_ids(request.user):
            raise PermissionDenied
        self._saved = obj

    def save_related(self, request, form, formsets, change: bool) -> None:
        # The pair is written here, with its documents, by the service that embeds the question.
        obj: QaPair = form.instance
        document_ids = [d.pk for d in form.cleaned_data.get("documents") or []]
        try:
            if change:
                services.qa_pair_update(pair=QaPair.objects.get(pk=obj.pk), question=obj.question,
                                        answer=obj.answer, document_ids=document_ids, is_active=obj.is_active,
                                        author=request.user)
            else:
                pair = services.qa_pair_create(kb=obj.kb, question=obj.question, answer=obj.answer,
                                               author=request.user, document_ids=document_ids,
                                               source=QaSource.MANUAL)
                form.instance = pair
                obj.pk = pair.pk
        except services.CurationError as exc:
            self.message_user(request, str(exc), messages.ERROR)

    def delete_model(self, request, obj: QaPair) -> None:
        services.qa_pair_delete(pair=obj)
