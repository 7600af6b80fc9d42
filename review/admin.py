"""The review queue in the admin: filters by base, status, reason and date; resolve and dismiss as actions;
the open count on the admin index."""
from __future__ import annotations

from django.contrib import admin, messages
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.http import urlencode
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from evals.importing import ImportFailed
from evals.services import EvalError
from kb import access
from kb.admin_access import EditableKbFilter
from review import selectors, services
from review.models import ReviewItem


@admin.register(ReviewItem)
class ReviewItemAdmin(admin.ModelAdmin):
    list_display = ["question_short", "kb", "reason", "confidence_band", "status", "created_at"]
    list_filter = [("kb", EditableKbFilter), "status", "reason", ("created_at", admin.DateFieldListFilter)]
    search_fields = ["question", "answer", "comment"]
    readonly_fields = ["kb", "reason", "comment", "question", "answer", "evidence_list", "confidence_score",
                       "confidence_band", "status", "resolved_by", "resolved_at", "qa_pair", "created_at"]
    fields = readonly_fields
    actions = ["resolve", "dismiss", "add_to_eval"]

    def get_queryset(self, request):
        return selectors.review_items_for(request.user)

    def _editor(self, request) -> bool:
        return access.is_kb_editor(request.user)

    def has_module_permission(self, request) -> bool:
        return self._editor(request)

    def has_view_permission(self, request, obj=None) -> bool:
        return self._editor(request)

    def has_change_permission(self, request, obj=None) -> bool:
        return self._editor(request)

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description=_("question"))
    def question_short(self, item: ReviewItem) -> str:
        return item.question[:80]

    @admin.display(description=_("evidence"))
    def evidence_list(self, item: ReviewItem):
        """Each passage the answer saw, with a link to edit its chunk."""
        cards = [c for c in item.evidence if isinstance(c, dict)]
        return format_html_join("", '<p><a href="{}">{} #{}</a>: {}</p>', (
            (reverse("admin:kb_chunk_change", args=[c["chunk_id"]]) if str(c.get("chunk_id", "")).isdigit() else "#",
             c.get("document_title", ""), c.get("chunk_id", ""), str(c.get("content", ""))[:300]) for c in cards)) \
            or "—"

    def _decide(self, request, queryset, action: str) -> None:
        count = 0
        for item in queryset:
            services.review_resolve(item=item, action=action, user=request.user)
            count += 1
        self.message_user(request, ngettext("%(count)d item updated.", "%(count)d items updated.", count)
                          % {"count": count}, messages.SUCCESS)

    @admin.action(description=_("Mark as resolved"))
    def resolve(self, request, queryset):
        self._decide(request, queryset, services.ReviewAction.RESOLVE)

    @admin.action(description=_("Dismiss"))
    def dismiss(self, request, queryset):
        self._decide(request, queryset, services.ReviewAction.DISMISS)

    @admin.action(description=_("Add to the base's evaluation set"))
    def add_to_eval(self, request, queryset):
        """Each question into its base's default evaluation set, with the documents its answer cited; the
        expected answers are then written on the evaluation page."""
        added: dict[int, tuple[str, int]] = {}
        for item in queryset.select_related("message", "kb"):
            try:
                entry = services.review_to_eval(item=item, user=request.user)
            except (ImportFailed, EvalError) as exc:
                self.message_user(request, f"{item.question[:60]}: {exc}", messages.ERROR)
                continue
            name, count = added.get(entry.eval_set_id, (entry.eval_set.name, 0))
            added[entry.eval_set_id] = (name, count + 1)
        for set_id, (name, count) in added.items():
            self.message_user(request, format_html(
                '{} <a href="{}">{}</a>',
                ngettext("%(count)d question added to", "%(count)d questions added to", count) % {"count": count},
                reverse("evals:set", args=[set_id]), name), messages.SUCCESS)

    def render_change_form(self, request, context, *args, **kwargs):
        obj = kwargs.get("obj")
        if obj is not None:
            # The add form takes its initial values from the query string; the item is then marked resolved.
            url = reverse("admin:curation_qapair_add") + "?" + urlencode({"kb": obj.kb_id, "question": obj.question})
            context["subtitle"] = format_html('<a href="{}">{}</a>', url, _("Write the correct answer"))
        return super().render_change_form(request, context, *args, **kwargs)


_app_list = admin.site.get_app_list


def _app_list_with_counts(request, app_label=None):
    """The admin index names how many review items wait for this user."""
    apps = _app_list(request, app_label)
    for app in apps:
        for model in app.get("models", []):
            if model.get("object_name") == ReviewItem.__name__:
                count = selectors.open_count_for(request.user)
                model["name"] = format_html("{} ({})", model["name"],
                                            ngettext("%(count)d open", "%(count)d open", count) % {"count": count})
    return apps


admin.site.get_app_list = _app_list_with_counts
