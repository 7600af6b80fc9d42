"""The document reader (a cited source opened at its passage) and the authenticated download of originals."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.views import APIView

from kb import selectors
from kb.access import readable_kb_ids
from kb.models import Chunk, ChunkLevel, Document
from kb.pages import IMAGE_TYPES, NoSuchPage, page_image, page_info
from kb.reader_markdown import display_title, render_section, top_level_heading


@dataclass(frozen=True)
class Section:
    chunk_id: int
    before: str
    cited: str
    after: str

    @property
    def is_cited(self) -> bool:
        return bool(self.cited)

    @property
    def html(self) -> SafeString:
        return render_section(self.before, self.cited, self.after)


def _readable(request: HttpRequest, pk: int) -> Document:
    # The same rule as the document API: a document outside the readable knowledge bases is a 404,
    # exactly like an unknown id, never a hint.
    try:
        return selectors.document_list(kb_ids=readable_kb_ids(request.user)).get(pk=pk)
    except Document.DoesNotExist:
        raise Http404(_("No such document.")) from None


def split_sections(parents: list[Chunk], cited: Chunk | None) -> list[Section]:
    """Parents as sections; the one holding the cited child has that passage cut out for highlighting."""
    target = cited.parent_id if cited is not None and cited.level == ChunkLevel.CHILD else getattr(cited, "pk", None)
    sections = []
    for parent in parents:
        text = parent.content
        if parent.pk != target:
            sections.append(Section(parent.pk, text, "", ""))
            continue
        at = text.find(cited.content) if cited.level == ChunkLevel.CHILD else -1
        if at < 0:  # the child's text is not verbatim in its parent: highlight the whole section
            sections.append(Section(parent.pk, "", text, ""))
        else:
            end = at + len(cited.content)
            sections.append(Section(parent.pk, text[:at], text[at:end], text[end:]))
    return sections


@dataclass(frozen=True)
class PageView:
    """The original page shown above the text: its image, and the cited lines as boxes in per cent of it."""

    number: int
    count: int
    highlights: list[dict[str, float]]

    @property
    def previous(self) -> int | None:
        return self.number - 1 if self.number > 1 else None

    @property
    def next(self) -> int | None:
        return self.number + 1 if self.number < self.count else None


def location_label(location: dict | None) -> str:
    """Where a cited passage is, in words: "p. 3", "sheet 价格表, rows 4–9", "slide 3"."""
    if not isinstance(location, dict):
        return ""
    if isinstance(location.get("page"), int):
        return _("p. %(page)s") % {"page": location["page"]}
    rows = location.get("rows")
    if isinstance(rows, list) and len(rows) == 2:
        label = _("rows %(first)s–%(last)s") % {"first": rows[0], "last": rows[1]}
        return f"{location['sheet']} · {label}" if location.get("sheet") else label
    if isinstance(location.get("slide"), int):
        return _("slide %(slide)s") % {"slide": location["slide"]}
    return ""


def _page_view(document: Document, requested: str, cited: Chunk | None) -> PageView | None:
    location = cited.location if cited is not None and isinstance(cited.location, dict) else {}
    number = int(requested) if requested.isdigit() else location.get("page")
    if (document.file_type != "pdf" and document.file_type not in IMAGE_TYPES) or not isinstance(number, int):
        return None
    try:
        info = page_info(document, number)
    except NoSuchPage:
        return None
    highlights = []
    for x0, top, x1, bottom in _boxes_on(location, number):
        highlights.append({"left": 100 * x0 / info.width, "top": 100 * top / info.height,
                           "width": 100 * (x1 - x0) / info.width, "height": 100 * (bottom - top) / info.height})
    return PageView(number, info.count, highlights)


def _boxes_on(location: dict, number: int) -> list:
    """The cited chunk's line boxes on page `number`: its first page's, or those of the part of a chunk that
    runs over several pages which lies on that page."""
    if location.get("page") == number:
        return location.get("boxes") or []
    part = next((p for p in location.get("parts") or [] if isinstance(p, dict) and p.get("page") == number), None)
    return (part or {}).get("boxes") or []


def _cited_where(cited: Chunk | None, requested: str) -> str:
    """"p. N" for the page the citation opened, when the cited chunk runs onto it; else the chunk's own place."""
    if cited is None:
        return ""
    location = cited.location if isinstance(cited.location, dict) else {}
    if requested.isdigit() and _boxes_on(location, int(requested)):
        return location_label({"page": int(requested)})
    return location_label(cited.location)


@login_required
def document_reader(request: HttpRequest, pk: int) -> HttpResponse:
    document = _readable(request, pk)
    cited = None
    raw = request.GET.get("chunk", "")
    if raw.isdigit():
        cited = selectors.chunk_of_document(document=document, chunk_id=int(raw))
    parents = selectors.document_sections(document=document)
    heading = top_level_heading(p.content for p in parents) or selectors.top_heading(document=document)
    return render(request, "kb/reader.html", {
        "document": document,
        "quoted_then": _quoted_then(cited, request.GET.get("rev", "")),
        "title": display_title(document.title, document.file.name if document.file else "",
                               parents[0].content if parents else "", heading),
        "sections": split_sections(parents, cited),
        "has_file": bool(document.file),
        "page": _page_view(document, request.GET.get("page", ""), cited),
        "cited_where": _cited_where(cited, request.GET.get("page", "")),
        "cited_id": cited.pk if cited is not None else None,
    })


def _quoted_then(cited: Chunk | None, requested: str) -> str | None:
    """The text an answer quoted when the cited chunk was edited since (`rev` is the revision the answer saw, 0
    for the text as ingested); None when the chunk still reads as it did."""
    if cited is None or not requested.isdigit():
        return None
    latest = selectors.latest_revisions(chunk_ids=[cited.pk]).get(cited.pk)
    if latest is None or int(requested) == latest:
        return None
    then = (selectors.chunk_revision(chunk=cited, revision_id=int(requested)) if int(requested)
            else selectors.chunk_first_revision(chunk=cited))
    return then.content if then is not None else None


@login_required
def document_page_image(request: HttpRequest, pk: int, number: int) -> HttpResponse:
    """Page `number` of a readable PDF, or a readable image as its page 1, as a PNG, for the reader."""
    document = _readable(request, pk)
    try:
        path = page_image(document, number)
    except NoSuchPage:
        raise Http404(_("No such page.")) from None
    response = FileResponse(path.open("rb"), content_type="image/png")
    response["Cache-Control"] = "private, max-age=3600"
    return response


class DocumentFileView(APIView):
    """The original upload, behind the API's sign-in (token or session): stored files are never public media."""

    # API keys: see apikeys.authentication (a read key reads; an ask key only asks).
    api_key_scopes = {"get": ("read",)}

    # The original upload with its own content type (text/plain, application/pdf…), hence */*.
    @extend_schema(responses={(200, "*/*"): OpenApiTypes.BINARY})
    def get(self, request: Request, pk: int) -> FileResponse:
        document = _readable(request, pk)
        if not document.file:
            raise Http404(_("This document has no stored file."))
        try:
            handle = document.file.open("rb")
        except OSError:
            raise Http404(_("The stored file is missing.")) from None
        return FileResponse(handle, as_attachment=True, filename=Path(document.file.name).name)
