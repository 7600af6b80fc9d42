"""Admin for documents (upload and delete go through the services), chunks and knowledge domains."""
from __future__ import annotations

from pathlib import Path

from django import forms
from django.contrib import admin, messages
from django.db.models import Count, Q
from django.urls import reverse
from django.utils.html import format_html

from kb import services
from kb.models import Chunk, ChunkLevel, Document, KnowledgeDomain


class DocumentUploadForm(forms.ModelForm):
    """Upload form: the file is validated and stored by document_create, not by ModelForm.save()."""

    file = forms.FileField()
    title = forms.CharField(required=False, max_length=255)
    domain = forms.CharField(required=False, max_length=64, initial=services.DEFAULT_DOMAIN)

    class Meta:
        model = Document
        fields = ["file", "title", "domain"]

    def clean(self):
        cleaned = super().clean()
        upload = cleaned.get("file")
        if upload is not None:
            try:
                self.result = services.document_create(uploaded_file=upload, title=cleaned.get("title") or None,
                                                       domain=cleaned.get("domain") or None, user=self.user)
            except services.IngestError as exc:
                raise forms.ValidationError(str(exc)) from None
        return cleaned

    def _post_clean(self) -> None:
        # The service built and saved the instance; skip ModelForm's own model validation of a blank one.
        if hasattr(self, "result"):
            self.instance = self.result[0]


class ChunkInline(admin.TabularInline):
    model = Chunk
    fields = ["level", "ordinal", "content", "char_start", "char_end", "token_count", "vector_id"]
    readonly_fields = fields
    extra = 0
    max_num = 0
    can_delete = False
    show_change_link = True

    def get_queryset(self, request):
        return super().get_queryset(request).filter(level=ChunkLevel.CHILD)


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ["title", "domain", "status", "progress", "chunk_count", "file_type", "size", "error_short",
                    "created_at"]
    list_filter = ["status", "domain", "file_type"]
    search_fields = ["title", "checksum"]
    readonly_fields = ["title", "original_file", "file_type", "domain", "status", "progress", "error", "attempts",
                       "checksum", "size", "metadata", "uploaded_by", "created_at", "updated_at"]
    inlines = [ChunkInline]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(
            child_count=Count("chunks", filter=Q(chunks__level=ChunkLevel.CHILD)))

    @admin.display(description="chunks", ordering="child_count")
    def chunk_count(self, document: Document) -> int:
        return document.child_count

    # The stored file is served by the authenticated download view; there is no public media URL.
    @admin.display(description="file")
    def original_file(self, document: Document) -> str:
        if not document.file:
            return "—"
        return format_html('<a href="{}">{}</a> · <a href="{}">read</a>',
                           reverse("kb-document-file", args=[document.pk]), Path(document.file.name).name,
                           reverse("kb-document-reader", args=[document.pk]))

    @admin.display(description="error")
    def error_short(self, document: Document) -> str:
        return document.error[:80]

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = DocumentUploadForm
            form = super().get_form(request, obj, change=change, **kwargs)
            form.user = request.user
            return form
        return super().get_form(request, obj, change=change, **kwargs)

    def get_exclude(self, request, obj=None):
        # An existing document's file is shown as a link to the download view, never as an editable input.
        return ["file"] if obj is not None else []

    def get_readonly_fields(self, request, obj=None):
        return self.readonly_fields if obj is not None else []

    def get_inlines(self, request, obj):
        return self.inlines if obj is not None else []

    def save_model(self, request, obj, form, change) -> None:
        if not change and not getattr(form, "result", (None, True))[1]:
            messages.info(request, "This file was already uploaded; showing the existing document.")
        # Uploads were stored by document_create in form.clean(); documents are otherwise read-only.

    def delete_model(self, request, obj: Document) -> None:
        services.document_delete(document=obj)

    def delete_queryset(self, request, queryset) -> None:
        for document in queryset:
            services.document_delete(document=document)


@admin.register(Chunk)
class ChunkAdmin(admin.ModelAdmin):
    list_display = ["id", "document", "level", "ordinal", "token_count", "vector_id"]
    list_filter = ["level"]
    search_fields = ["content"]
    list_select_related = ["document"]
    readonly_fields = ["document", "parent", "level", "ordinal", "content", "char_start", "char_end", "token_count",
                       "vector_id"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # chunks belong to their document: delete the document instead


@admin.register(KnowledgeDomain)
class KnowledgeDomainAdmin(admin.ModelAdmin):
    list_display = ["domain_id", "description", "document_count", "updated_at"]
    search_fields = ["domain_id", "description"]
    readonly_fields = ["document_count", "created_at", "updated_at"]
    fields = ["domain_id", "description", "when_to_retrieve", "document_count", "created_at", "updated_at"]
    actions = ["regenerate_knowledge_map"]

    @admin.action(description="Regenerate knowledge map (re-profile documents, re-aggregate the domain)")
    def regenerate_knowledge_map(self, request, queryset) -> None:
        from kb.domains.service import build_domain_service

        service = build_domain_service()
        for domain in queryset:
            service.regenerate(domain.domain_id)
        self.message_user(request, f"Regenerated {queryset.count()} domain(s).", messages.SUCCESS)
