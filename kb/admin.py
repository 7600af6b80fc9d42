"""Admin for documents (upload, retry, re-index, move and delete go through the services), chunks and domains."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.text import capfirst
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _
from simple_history.admin import SimpleHistoryAdmin

from kb import access, maintenance, services
from kb.access import editable_kb_ids, kb_default, readable_kb_ids
from kb.admin_access import KbScopedAdmin, ReadableKbFilter, grant_holder_field
from kb.admin_upload import MultiUploadForm, remember_upload, remembered_upload, report_upload, upload_files
from kb.editing import ChunkEditError, chunk_edit
from kb.ingestion import reasons
from kb.ingestion.parsers import SUPPORTED_TYPES
from kb.models import Chunk, ChunkLevel, Document, DocumentStatus, KbGrant, KnowledgeBase, KnowledgeDomain

# How many documents one progress poll may ask about (a changelist page shows at most a few hundred).
MAX_PROGRESS_IDS = 500


class DocumentUploadForm(forms.ModelForm):
    """Upload form: the file is validated and stored by document_create, not by ModelForm.save()."""

    file = forms.FileField(label=_("File"))
    title = forms.CharField(label=_("Title"), required=False, max_length=255)
    domain = forms.CharField(label=_("Domain"), required=False, max_length=64, initial=services.DEFAULT_DOMAIN)

    class Meta:
        model = Document
        fields = ["file", "title", "kb", "domain"]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["kb"].queryset = KnowledgeBase.objects.filter(pk__in=editable_kb_ids(self.user))
        self.fields["kb"].required = False  # the default knowledge base, as for the API

    def clean(self):
        cleaned = super().clean()
        upload = cleaned.get("file")
        if upload is not None and not self.errors:
            cleaned["kb"] = cleaned.get("kb") or kb_default()
            if cleaned["kb"].pk not in editable_kb_ids(self.user):
                raise forms.ValidationError(_("You may not upload into this knowledge base."))
            try:
                self.result = services.document_create(uploaded_file=upload, title=cleaned.get("title") or None,
                                                       domain=cleaned.get("domain") or None, user=self.user,
                                                       kb=cleaned["kb"])
            except services.IngestError as exc:
                raise forms.ValidationError(str(exc)) from None
        return cleaned

    def _post_clean(self) -> None:
        # The service built and saved the instance; skip ModelForm's own model validation of a blank one.
        if hasattr(self, "result"):
            self.instance = self.result[0]
            self.instance.upload_was_new = self.result[1]  # read by DocumentAdmin.response_add


class DocumentActionForm(ActionForm):
    """The changelist's action bar, with the target domain or knowledge base the "move" actions need."""

    domain = forms.CharField(label=_("Target domain"), required=False, max_length=64,
                             widget=forms.TextInput(attrs={"list": "dm-domains", "size": 14}))
    # A name typed with suggestions rather than a select of every base: the form is built without the
    # request, and the suggestions (the bases this user may edit) come from the changelist's context.
    target_kb = forms.CharField(label=_("Target knowledge base"), required=False, max_length=128,
                                widget=forms.TextInput(attrs={"list": "dm-kbs", "size": 16}))


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


def ingestion_cell(document: Document) -> str:
    """Progress bar, status and failure reason (in the reader's language); admin-progress.js keeps in-flight rows up
    to date."""
    return format_html(
        '<div class="dm-ingest" data-document-id="{}" data-status="{}" data-progress-url="{}">'
        # A <progress> element, not a div sized by a style attribute: the CSP allows no inline styles.
        '<progress class="dm-bar" max="100" value="{}"></progress>'
        '<span class="dm-status">{}</span> <span class="dm-percent">{}%</span>'
        '<div class="dm-error">{}</div></div>',
        document.pk, document.status, reverse("admin:kb_document_progress"), document.progress,
        document.get_status_display(),
        document.progress, reasons.in_language(document.error))


class UploadFilter(admin.SimpleListFilter):
    """The documents of one upload of this session (`?upload=<token>`, where the multi-file upload sends the
    uploader): one view of a folder's or an archive's files, however many pages of other documents there are."""

    title = _("upload")
    parameter_name = "upload"

    def lookups(self, request, model_admin):
        # Offered only while one is shown, so that "All" leads back to every document. A filter without choices is
        # not applied at all: an upload this session does not hold (another user's, or forgotten) lists nothing.
        token = self.value()
        return [(token, _("this upload"))] if token else []

    def queryset(self, request, queryset):
        token = self.value()
        if not token:
            return queryset
        return queryset.filter(pk__in=remembered_upload(request, token) or [])


def upload_summary(queryset) -> dict[str, int]:
    """How many of these documents are in each ingestion status, and in all."""
    counts = dict(queryset.order_by().values_list("status").annotate(n=Count("id")).values_list("status", "n"))
    return {"total": sum(counts.values()), **{status: counts.get(status, 0) for status in DocumentStatus.values}}


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ["title", "kb", "domain", "ingestion", "chunk_count", "file_type", "size", "created_at"]
    # Only the bases of documents this user can see: a plain filter would list every base's name.
    list_filter = [UploadFilter, ("kb", admin.RelatedOnlyFieldListFilter), "status", "domain", "file_type"]
    search_fields = ["title", "checksum"]
    readonly_fields = ["title", "original_file", "file_type", "kb", "domain", "ingestion", "attempts", "checksum",
                       "size",
                       "metadata", "uploaded_by", "created_at", "updated_at"]
    inlines = [ChunkInline]
    actions = ["retry_ingestion", "reindex", "move_to_domain", "move_to_kb"]
    action_form = DocumentActionForm
    change_list_template = "admin/kb/document/change_list.html"

    class Media:
        css = {"all": ["docmind/admin.css"]}
        js = ["docmind/admin-progress.js", "docmind/admin-upload.js"]

    def get_queryset(self, request):
        # Staff see the documents of the knowledge bases they can read, in the admin as in the API.
        return super().get_queryset(request).filter(kb_id__in=readable_kb_ids(request.user)).annotate(
            child_count=Count("chunks", filter=Q(chunks__level=ChunkLevel.CHILD)))

    def has_change_permission(self, request, obj=None) -> bool:
        allowed = super().has_change_permission(request, obj)
        return allowed and (obj is None or obj.kb_id in editable_kb_ids(request.user))

    def has_delete_permission(self, request, obj=None) -> bool:
        allowed = super().has_delete_permission(request, obj)
        return allowed and (obj is None or obj.kb_id in editable_kb_ids(request.user))

    @staticmethod
    def _editable(request, queryset):
        # Actions change documents: only those of knowledge bases the user may edit (others it may only read).
        return queryset.filter(kb_id__in=editable_kb_ids(request.user))

    @admin.display(description=_("chunks"), ordering="child_count")
    def chunk_count(self, document: Document) -> str:
        return format_html('<span data-chunks-of="{}">{}</span>', document.pk, document.child_count)

    @admin.display(description=_("ingestion"), ordering="status")
    def ingestion(self, document: Document) -> str:
        return ingestion_cell(document)

    # The stored file is served by the authenticated download view; there is no public media URL.
    @admin.display(description=_("file"))
    def original_file(self, document: Document) -> str:
        if not document.file:
            return "—"
        return format_html('<a href="{}">{}</a> · <a href="{}">{}</a>',
                           reverse("kb-document-file", args=[document.pk]), Path(document.file.name).name,
                           reverse("kb-document-reader", args=[document.pk]), _("read"))

    # --- adding -------------------------------------------------------------------------------------
    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = DocumentUploadForm
            form = super().get_form(request, obj, change=change, **kwargs)
            form.user = request.user
            return form
        return super().get_form(request, obj, change=change, **kwargs)

    def get_exclude(self, request, obj=None):
        # An existing document's file is shown as a link to the download view, never as an editable input.
        # Status, progress and error belong to the ingestion worker and the services (retry, re-index): they
        # are shown, live, by the read-only ingestion cell, and a hand-set "ready" would claim an index
        # that does not exist.
        return ["file", "status", "progress", "error"] if obj is not None else []

    def get_readonly_fields(self, request, obj=None):
        return self.readonly_fields if obj is not None else []

    def get_inlines(self, request, obj):
        return self.inlines if obj is not None else []

    def save_model(self, request, obj, form, change) -> None:
        """Uploads were stored by document_create in form.clean(); documents are otherwise read-only."""

    def response_add(self, request, obj, post_url_continue=None) -> HttpResponse:
        # Django would say "added successfully" although indexing has only been queued and may still fail.
        if not getattr(obj, "upload_was_new", True):
            self.message_user(request, gettext("“%(title)s” was already uploaded; it is shown below.")
                              % {"title": obj.title}, messages.INFO)
        else:
            self.message_user(request, gettext("“%(title)s” was accepted for indexing; its progress is shown below.")
                              % {"title": obj.title}, messages.SUCCESS)
        return HttpResponseRedirect(reverse("admin:kb_document_changelist"))

    def get_changeform_initial_data(self, request):
        return {"domain": services.DEFAULT_DOMAIN}

    # --- extra views: multi-file upload and live progress -------------------------------------------
    def get_urls(self):
        extra = [
            path("upload/", self.admin_site.admin_view(self.upload_view), name="kb_document_upload"),
            path("progress/", self.admin_site.admin_view(self.progress_view), name="kb_document_progress"),
        ]
        return extra + super().get_urls()

    def upload_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_add_permission(request):
            raise PermissionDenied
        changelist = reverse("admin:kb_document_changelist")
        form = MultiUploadForm(request.POST or None, request.FILES or None, user=request.user)
        if request.method == "POST" and form.is_valid():
            outcome = upload_files(files=form.cleaned_data["files"], domain=form.cleaned_data["domain"],
                                   user=request.user, kb=form.cleaned_data["kb"], paths=form.cleaned_data["paths"])
            report_upload(request, outcome)
            if outcome.document_ids:  # to this upload's own progress view
                return HttpResponseRedirect(f"{changelist}?{UploadFilter.parameter_name}="
                                            f"{remember_upload(request, outcome.document_ids)}")
            return HttpResponseRedirect(changelist)
        context = {**self.admin_site.each_context(request), "opts": self.opts, "form": form,
                   "title": _("Upload documents"), "media": self.media, **_upload_context(form)}
        return TemplateResponse(request, "admin/kb/document/upload.html", context)

    def progress_view(self, request: HttpRequest) -> JsonResponse:
        """Staff-only JSON for the progress poller: status, progress and error of the documents asked for."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        ids = [int(i) for i in request.GET.get("ids", "").split(",") if i.strip().isdigit()][:MAX_PROGRESS_IDS]
        rows = self.get_queryset(request).filter(pk__in=ids)
        answer: dict = {"documents": [
            {"id": d.pk, "status": d.status, "status_label": str(d.get_status_display()), "progress": d.progress,
             "error": reasons.in_language(d.error), "chunk_count": d.child_count} for d in rows]}
        if (summary := self._upload_summary(request)) is not None:
            answer["upload"] = summary
        return JsonResponse(answer)

    def _upload_summary(self, request: HttpRequest) -> dict[str, int] | None:
        """Counts per status of the session's upload named by `?upload=`, of the documents this user may read."""
        token = request.GET.get(UploadFilter.parameter_name) or ""
        ids = remembered_upload(request, token) if token else None
        if ids is None:
            return None
        return upload_summary(Document.objects.filter(pk__in=ids, kb_id__in=readable_kb_ids(request.user)))

    def changelist_view(self, request, extra_context=None):
        extra = {**_upload_context(MultiUploadForm(user=request.user)), "can_upload": self.has_add_permission(request),
                 "editable_kbs": KnowledgeBase.objects.filter(pk__in=editable_kb_ids(request.user)).order_by("name"),
                 "upload_summary": self._upload_summary(request),
                 "upload_token": request.GET.get(UploadFilter.parameter_name, "")}
        return super().changelist_view(request, {**extra, **(extra_context or {})})

    # --- actions ------------------------------------------------------------------------------------
    @admin.action(description=_("Retry ingestion of the selected failed documents"), permissions=["change"])
    def retry_ingestion(self, request, queryset) -> None:
        queryset = self._editable(request, queryset)
        done = sum(maintenance.document_retry(document=d) for d in queryset)
        self._report(request, done, len(queryset) - done,
                     ngettext("%(count)d document queued for ingestion again.",
                              "%(count)d documents queued for ingestion again.", done),
                     gettext("%(count)d skipped: only failed documents can be retried."))

    @admin.action(description=_("Re-index the selected documents (rebuild chunks and vectors)"),
                  permissions=["change"])
    def reindex(self, request, queryset) -> None:
        queryset = self._editable(request, queryset)
        done = sum(maintenance.document_reindex(document=d) for d in queryset)
        self._report(request, done, len(queryset) - done,
                     ngettext("%(count)d document queued for re-indexing.",
                              "%(count)d documents queued for re-indexing.", done),
                     gettext("%(count)d skipped: already queued or being processed."))

    @admin.action(description=_("Move the selected documents to the target domain"), permissions=["change"])
    def move_to_domain(self, request, queryset) -> None:
        queryset = self._editable(request, queryset)
        target = (request.POST.get("domain") or "").strip()
        if not target:
            self.message_user(request, gettext("Type the target domain next to the action first."), messages.ERROR)
            return
        self._move_each(request, queryset,
                        lambda document: maintenance.document_move(document=document, domain=target),
                        lambda done: ngettext("%(count)d document moved to %(domain)s.",
                                              "%(count)d documents moved to %(domain)s.", done)
                        % {"count": done, "domain": target})

    @admin.action(description=_("Move the selected documents to the target knowledge base"), permissions=["change"])
    def move_to_kb(self, request, queryset) -> None:
        queryset = self._editable(request, queryset)
        name = (request.POST.get("target_kb") or "").strip()
        target = KnowledgeBase.objects.filter(name=name, pk__in=editable_kb_ids(request.user)).first() if name else None
        if target is None:
            # An unknown base and one this user may not edit get the same answer: names are not revealed.
            self.message_user(request, gettext("Type the name of a knowledge base you may edit next to the action "
                                               "first."), messages.ERROR)
            return
        self._move_each(request, queryset,
                        lambda document: maintenance.document_move_to_kb(document=document, kb=target),
                        lambda done: ngettext("%(count)d document moved to %(kb)s.",
                                              "%(count)d documents moved to %(kb)s.", done)
                        % {"count": done, "kb": target.name})

    def _move_each(self, request, queryset, move: Callable[[Document], bool], moved: Callable[[int], str]) -> None:
        """Moves each document; one that cannot move (being processed, refused) is reported by name, and the
        others still move. Then one message counts those moved."""
        done = 0
        for document in queryset:
            try:
                done += move(document)
            except services.IngestError as exc:
                self.message_user(request, f"{document.title}: {exc}", messages.ERROR)
        if done:
            self.message_user(request, moved(done), messages.SUCCESS)

    def _report(self, request, done: int, skipped: int, done_message: str, skipped_message: str) -> None:
        if done:
            self.message_user(request, done_message % {"count": done}, messages.SUCCESS)
        if skipped:
            self.message_user(request, skipped_message % {"count": skipped}, messages.WARNING)

    # --- deleting -----------------------------------------------------------------------------------
    def get_deleted_objects(self, objs, request):
        """What the delete confirmation lists: the documents, and how many chunks go with them.

        Django's default asks each related model's admin for its delete permission, and the chunk admin
        refuses every delete (a chunk is never deleted on its own), so no one could delete a document.
        Chunks go with their document through document_delete, which also removes their vectors and BM25
        entries: the permission to delete the document is the one that counts. Listing the chunks one
        by one would also make the page as long as the documents.
        """
        documents = list(objs)
        to_delete = [format_html('{}: <a href="{}">{}</a>', capfirst(Document._meta.verbose_name),
                                 reverse("admin:kb_document_change", args=[d.pk]), d) for d in documents]
        model_count = {Document._meta.verbose_name_plural: len(documents)}
        chunks = Chunk.objects.filter(document__in=documents).count()
        if chunks:
            model_count[Chunk._meta.verbose_name_plural] = chunks
        allowed = all(self.has_delete_permission(request, d) for d in documents)
        return to_delete, model_count, set() if allowed else {Document._meta.verbose_name}, []

    def delete_model(self, request, obj: Document) -> None:
        services.document_delete(document=obj)

    def delete_queryset(self, request, queryset) -> None:
        editable = editable_kb_ids(request.user)
        for document in queryset:
            if document.kb_id not in editable:
                raise PermissionDenied
        for document in queryset:
            services.document_delete(document=document)


def _upload_context(form: MultiUploadForm) -> dict:
    # Domain suggestions from the bases this user can read only: another base's domain names are its own.
    readable = readable_kb_ids(form.user)
    known = set(KnowledgeDomain.objects.filter(kb_id__in=readable).values_list("domain_id", flat=True))
    known |= set(Document.objects.filter(kb_id__in=readable).values_list("domain", flat=True).distinct())
    return {"upload_form": form, "domains": sorted(known | {services.DEFAULT_DOMAIN}),
            "supported_types": ", ".join(f".{t}" for t in SUPPORTED_TYPES),
            "max_upload_mb": settings.MAX_UPLOAD_BYTES // 2**20, "max_archive_entries": settings.MAX_ARCHIVE_ENTRIES,
            "max_archive_mb": settings.MAX_ARCHIVE_UNPACKED_BYTES // 2**20}


@admin.register(Chunk)
class ChunkAdmin(SimpleHistoryAdmin, KbScopedAdmin):
    """Chunks of readable bases only: a chunk is its document's text, read under the document's base."""

    kb_scope = "document__kb_id"
    list_display = ["id", "document", "level", "ordinal", "token_count", "vector_id"]
    list_filter = [("document__kb", ReadableKbFilter), "level"]
    search_fields = ["content"]
    list_select_related = ["document"]
    # The text is edited by editors of the chunk's base (kb.editing keeps each revision and re-indexes); the
    # history page lists the revisions and restores one.
    readonly_fields = ["document", "parent", "level", "ordinal", "char_start", "char_end", "token_count",
                       "vector_id"]
    fields = ["document", "parent", "level", "ordinal", "content", "char_start", "char_end", "token_count",
              "vector_id"]
    history_list_display = ["history_change_reason"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # chunks belong to their document: delete the document instead

    def history_view(self, request, object_id, extra_context=None):
        # simple-history reads the chunk through the model's manager: a chunk of a base the user cannot read
        # must answer as an unknown id here too, as the change view does.
        if not self.get_queryset(request).filter(pk=object_id).exists():
            return self._get_obj_does_not_exist_redirect(request, self.opts, str(object_id))
        return super().history_view(request, object_id, extra_context)

    def history_form_view(self, request, object_id, version_id, extra_context=None):
        chunk = self.get_queryset(request).filter(pk=object_id).first()
        if chunk is None or not self.may_edit(request, chunk):
            return self._get_obj_does_not_exist_redirect(request, self.opts, str(object_id))
        return super().history_form_view(request, object_id, version_id, extra_context)

    def get_readonly_fields(self, request, obj=None):
        if obj is not None and self.may_edit(request, obj):
            return self.readonly_fields
        return [*self.readonly_fields, "content"]

    def save_model(self, request, obj: Chunk, form, change: bool) -> None:
        # Compared with the stored text, not the form's initial one: restoring a revision from the history page
        # submits that revision's text unchanged.
        if not change or form.cleaned_data.get("content") == Chunk.objects.filter(pk=obj.pk).values_list(
                "content", flat=True).first():
            return
        try:
            chunk_edit(chunk=obj, content=form.cleaned_data["content"], user=request.user)
        except ChunkEditError as exc:
            self.message_user(request, str(exc), messages.ERROR)


class KbGrantInline(admin.TabularInline):
    model = KbGrant
    fields = ["user", "group", "access"]
    extra = 1

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        return grant_holder_field(db_field, request) or super().formfield_for_foreignkey(db_field, request, **kwargs)

    # Who holds a grant is shown to the base's editors only, as GET /api/kbs/{id}/grants/ is.
    @staticmethod
    def _editable(request, obj) -> bool:
        return obj is None or obj.pk in editable_kb_ids(request.user)

    def has_view_permission(self, request, obj=None) -> bool:
        return super().has_view_permission(request, obj) and self._editable(request, obj)

    def has_add_permission(self, request, obj=None) -> bool:
        return super().has_add_permission(request, obj) and self._editable(request, obj)

    def has_change_permission(self, request, obj=None) -> bool:
        return super().has_change_permission(request, obj) and self._editable(request, obj)

    def has_delete_permission(self, request, obj=None) -> bool:
        return super().has_delete_permission(request, obj) and self._editable(request, obj)


class KbDocumentInline(admin.TabularInline):
    model = Document
    fields = ["title", "domain", "status", "created_at"]
    readonly_fields = fields
    extra = 0
    max_num = 0
    can_delete = False
    show_change_link = True


@admin.register(KnowledgeBase)
class KnowledgeBaseAdmin(admin.ModelAdmin):
    """Knowledge bases with their grants and documents inline; staff see the bases they can read and
    change those they can edit (grant changes go through the same services as the API)."""

    list_display = ["name", "is_default", "owner", "document_total", "updated_at"]
    search_fields = ["name", "description"]
    fields = ["name", "description", "owner", "is_default", "created_at", "updated_at"]
    readonly_fields = ["owner", "is_default", "created_at", "updated_at"]
    inlines = [KbGrantInline, KbDocumentInline]

    def get_queryset(self, request):
        return super().get_queryset(request).filter(pk__in=readable_kb_ids(request.user)).annotate(
            document_total=Count("documents"))

    @admin.display(description=_("documents"), ordering="document_total")
    def document_total(self, kb: KnowledgeBase) -> int:
        return kb.document_total

    def has_change_permission(self, request, obj=None) -> bool:
        allowed = super().has_change_permission(request, obj)
        return allowed and (obj is None or obj.pk in editable_kb_ids(request.user))

    def has_delete_permission(self, request, obj=None) -> bool:
        allowed = super().has_delete_permission(request, obj)
        return allowed and (obj is None or (obj.pk in editable_kb_ids(request.user) and not obj.is_default))

    def save_model(self, request, obj, form, change) -> None:
        if change:
            services.kb_update(kb=obj, name=obj.name, description=obj.description)
        else:
            created = services.kb_create(name=obj.name, description=obj.description, owner=request.user)
            obj.pk, obj.owner = created.pk, created.owner

    def save_formset(self, request, form, formset, change) -> None:
        if formset.model is not KbGrant:
            return super().save_formset(request, form, formset, change)
        # save(commit=False) writes nothing but sorts the rows into new_objects, changed_objects and
        # deleted_objects, which the admin's history message is built from; the writes themselves go
        # through kb_grant / kb_revoke, as from the API, so cached answers follow the grant change.
        formset.save(commit=False)
        kb = form.instance
        for grant in formset.deleted_objects:
            services.kb_revoke(kb=kb, user=grant.user, group=grant.group)
        for grant, _changed in formset.changed_objects:
            stored = KbGrant.objects.filter(pk=grant.pk).first()
            if stored is not None and (stored.user_id, stored.group_id) != (grant.user_id, grant.group_id):
                services.kb_revoke(kb=kb, user=stored.user, group=stored.group)  # the row now names someone else
        for grant in [*formset.new_objects, *(grant for grant, _changed in formset.changed_objects)]:
            try:
                services.kb_grant(kb=kb, access=grant.access, user=grant.user, group=grant.group)
            except services.IngestError as exc:
                self.message_user(request, str(exc), messages.ERROR)

    def delete_model(self, request, obj: KnowledgeBase) -> None:
        try:
            services.kb_delete(kb=obj)
        except services.IngestError as exc:
            self.message_user(request, str(exc), messages.ERROR)


@admin.register(KnowledgeDomain)
class KnowledgeDomainAdmin(KbScopedAdmin):
    """Domains of readable bases; their text reaches every reader's planner prompt, so it is changed (and the
    map regenerated) only by those who may edit the domain's base."""

    list_display = ["domain_id", "kb", "description", "document_count", "updated_at"]
    list_filter = [("kb", ReadableKbFilter)]
    search_fields = ["domain_id", "description"]
    readonly_fields = ["kb", "document_count", "created_automatically", "created_at", "updated_at"]
    fields = ["kb", "domain_id", "description", "when_to_retrieve", "document_count", "created_automatically",
              "created_at", "updated_at"]
    actions = ["regenerate_knowledge_map"]

    def get_readonly_fields(self, request, obj=None):
        # A new domain names its base, among those the user may edit.
        return self.readonly_fields if obj is not None else [f for f in self.readonly_fields if f != "kb"]

    def has_add_permission(self, request) -> bool:
        return super().has_add_permission(request) and self.may_edit(request, None)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "kb":
            kwargs["queryset"] = access.editable_kbs(request.user)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def save_model(self, request, obj, form, change) -> None:
        # A description written here makes the domain the administrator's: it stays when its last document
        # goes, rather than disappearing with the text.
        if "description" in form.changed_data:
            obj.created_automatically = False
        super().save_model(request, obj, form, change)

    @admin.action(description=_("Regenerate the knowledge map (re-profile documents, re-aggregate the domain)"),
                  permissions=["change"])
    def regenerate_knowledge_map(self, request, queryset) -> None:
        # heavy: the domain service loads pydantic and the model client (about 80 ms); the admin loads at django.setup()
        from kb.domains.service import build_domain_service

        service = build_domain_service()
        queryset = self.editable_only(request, queryset)
        for domain in queryset:
            service.regenerate(domain.domain_id, kb_id=domain.kb_id)
        count = queryset.count()
        self.message_user(request, ngettext("Regenerated %(count)d domain.", "Regenerated %(count)d domains.", count)
                          % {"count": count}, messages.SUCCESS)
