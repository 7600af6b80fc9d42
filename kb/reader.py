"""The document reader (a cited source opened at its passage) and the authenticated download of originals."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.views import APIView

from kb import selectors
from kb.models import Chunk, ChunkLevel, Document


@dataclass(frozen=True)
class Section:
    chunk_id: int
    before: str
    cited: str
    after: str

    @property
    def is_cited(self) -> bool:
        return bool(self.cited)


def _readable(request: HttpRequest, pk: int) -> Document:
    # The same rule as the document API: a document outside the readable knowledge bases is a 404,
    # exactly like an unknown id, never a hint.
    from kb.access import readable_kb_ids

    try:
        return selectors.document_list(kb_ids=readable_kb_ids(request.user)).get(pk=pk)
    except Document.DoesNotExist:
        raise Http404("no such document") from None


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


@login_required
def document_reader(request: HttpRequest, pk: int) -> HttpResponse:
    document = _readable(request, pk)
    cited = None
    raw = request.GET.get("chunk", "")
    if raw.isdigit():
        cited = selectors.chunk_of_document(document=document, chunk_id=int(raw))
    return render(request, "kb/reader.html", {
        "document": document,
        "sections": split_sections(selectors.document_sections(document=document), cited),
        "has_file": bool(document.file),
    })


class DocumentFileView(APIView):
    """The original upload, behind the API's sign-in (token or session): stored files are never public media."""

    # The original upload with its own content type (text/plain, application/pdf…), hence */*.
    @extend_schema(responses={(200, "*/*"): OpenApiTypes.BINARY})
    def get(self, request: Request, pk: int) -> FileResponse:
        document = _readable(request, pk)
        if not document.file:
            raise Http404("this document has no stored file")
        try:
            handle = document.file.open("rb")
        except OSError:
            raise Http404("the stored file is missing") from None
        return FileResponse(handle, as_attachment=True, filename=Path(document.file.name).name)
