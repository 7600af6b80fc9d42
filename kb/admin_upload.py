"""The document admin's multi-file upload (files, a folder, zip archives): each file goes through document_create;
one bad file never stops the rest."""
from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from django import forms
from django.contrib import messages
from django.http import HttpRequest
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from kb import archive_upload, services
from kb.access import editable_kb_ids, kb_default
from kb.models import KnowledgeBase


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """A file field that cleans to a list of uploaded files (Django's documented recipe)."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("widget", MultipleFileInput(attrs={"id": "dm-upload-files"}))
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        single = super().clean
        if isinstance(data, list | tuple) and data:
            return [single(item, initial) for item in data]
        return [single(data or None, initial)]  # no file at all: the field's "required" error


class MultiUploadForm(forms.Form):
    # Empty files pass here so that document_create reports them by name, like every other refusal.
    files = MultipleFileField(label=_("Files"), allow_empty_file=True)
    domain = forms.CharField(label=_("Domain"), max_length=64, initial=services.DEFAULT_DOMAIN,
                             widget=forms.TextInput(attrs={"list": "dm-domains", "id": "dm-upload-domain"}))
    kb = forms.ModelChoiceField(label=_("Knowledge base"), queryset=KnowledgeBase.objects.none(), required=False)
    # A folder's files keep their path inside it (the browser sends base names only): a JSON list of paths in
    # the order of `files`, filled in by admin-upload.js; empty for files chosen one by one.
    paths = forms.CharField(required=False, widget=forms.HiddenInput(attrs={"id": "dm-upload-paths"}))

    def __init__(self, *args, user=None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.user = user
        # Only the knowledge bases the uploader may edit are offered (and accepted).
        editable = KnowledgeBase.objects.filter(pk__in=editable_kb_ids(user)).order_by("-is_default", "name")
        self.fields["kb"].queryset = editable
        first = editable.first()
        self.fields["kb"].initial = first.pk if first is not None else None
        self._editable = {kb.pk for kb in editable}

    def clean_paths(self) -> list[str]:
        raw = self.cleaned_data.get("paths") or ""
        if not raw:
            return []
        try:
            paths = json.loads(raw)
        except ValueError:
            paths = None
        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            raise forms.ValidationError(_("The folder paths could not be read; choose the folder again."))
        return paths

    def clean_kb(self) -> KnowledgeBase:
        kb = self.cleaned_data.get("kb") or kb_default()  # none chosen: the default, as for the API
        if kb.pk not in self._editable:
            raise forms.ValidationError(_("You may not upload into this knowledge base."))
        return kb


@dataclass
class UploadOutcome:
    created: list[str] = field(default_factory=list)
    existing: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    # Every document the upload queued or found already stored: what its progress view lists.
    document_ids: list[int] = field(default_factory=list)


def upload_files(*, files, domain: str, user, kb: KnowledgeBase, paths: list[str] | None = None) -> UploadOutcome:
    """Queue every acceptable file (a zip archive: every file inside it); the refused ones are listed with the
    service's reason. `paths`, when given, are the files' paths inside a chosen folder, kept in the titles."""
    outcome = UploadOutcome()
    paths = paths or []
    for index, upload in enumerate(files):
        path = paths[index] if index < len(paths) and paths[index] else upload.name
        if PurePosixPath(upload.name).suffix.lower() == ".zip":
            _upload_archive(outcome, archive=upload, path=path, domain=domain, user=user, kb=kb)
            continue
        try:
            title = archive_upload.path_title(path) if path != upload.name else None
            document, created = services.document_create(uploaded_file=upload, title=title, domain=domain or None,
                                                         user=user, kb=kb)
        except services.IngestError as exc:
            outcome.refused.append((path, str(exc)))
            continue
        (outcome.created if created or document.requeued else outcome.existing).append(document.title)
        outcome.document_ids.append(document.pk)
    return outcome


def _upload_archive(outcome: UploadOutcome, *, archive, path: str, domain: str, user, kb: KnowledgeBase) -> None:
    try:
        batch = archive_upload.documents_create_from_archive(archive=archive, domain=domain or None, user=user,
                                                             kb=kb)
    except (archive_upload.ArchiveError, services.IngestError) as exc:
        outcome.refused.append((path, str(exc)))
        return
    outcome.created.extend(document.title for _, document in batch.accepted)
    outcome.document_ids.extend(document.pk for _, document in batch.accepted)
    for refusal in batch.refused:
        if refusal.code == "duplicate" and refusal.document_id is not None:
            outcome.existing.append(refusal.path)
            outcome.document_ids.append(refusal.document_id)
        else:
            outcome.refused.append((f"{path}: {refusal.path}", refusal.reason))


def report_upload(request: HttpRequest, outcome: UploadOutcome) -> None:
    """One message per kind of result; never "added successfully": indexing has only just been queued. The titles
    of a folder's hundreds of files are not all listed: the progress view below lists them."""
    if outcome.created:
        messages.success(request, gettext("Accepted %(count)d file(s) for indexing: %(titles)s. Their progress "
                                          "is shown below; a file that cannot be indexed will show why.")
                         % {"count": len(outcome.created), "titles": _some(outcome.created)})
    if outcome.existing:
        messages.info(request, gettext("Already uploaded, not stored again: %(titles)s.")
                      % {"titles": _some(outcome.existing)})
    for name, reason in outcome.refused:
        # Quoted: the admin capitalises a message's first letter, which would rename "notes.rtf" to "Notes.rtf".
        messages.error(request, gettext("“%(name)s” was not accepted: %(reason)s") % {"name": name, "reason": reason})


# Titles named in one message; the rest are counted.
NAMED_TITLES = 10
# Uploads whose progress view a session keeps (the newest ones).
KEPT_UPLOADS = 5
_SESSION_KEY = "dm_uploads"


def _some(titles: list[str]) -> str:
    if len(titles) <= NAMED_TITLES:
        return ", ".join(titles)
    more = len(titles) - NAMED_TITLES
    return gettext("%(titles)s and %(count)d more") % {"titles": ", ".join(titles[:NAMED_TITLES]), "count": more}


def remember_upload(request: HttpRequest, document_ids: list[int]) -> str:
    """Keep an upload's documents in the uploader's session under a new token, for its progress view; only the
    newest KEPT_UPLOADS are kept. A session's tokens are its own: another user's token finds nothing here."""
    token = secrets.token_urlsafe(6)
    request.session[_SESSION_KEY] = [*_kept(request)[-(KEPT_UPLOADS - 1):], [token, sorted(set(document_ids))]]
    return token


def remembered_upload(request: HttpRequest, token: str) -> list[int] | None:
    """The documents of this session's upload `token`; None when the session holds no such upload."""
    for kept_token, ids in _kept(request):
        if kept_token == token:
            return [int(i) for i in ids]
    return None


def _kept(request: HttpRequest) -> list[list]:
    """The session's uploads as [token, ids] pairs; anything else stored under the key is passed over."""
    stored = request.session.get(_SESSION_KEY)
    if not isinstance(stored, list):
        return []
    return [entry for entry in stored if isinstance(entry, list) and len(entry) == 2]
