"""Document API: list, upload of a file or a zip archive (202, ingested in the background), detail, move, delete."""
from __future__ import annotations

from django.http import Http404
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from docmind.errors import error_response
from docmind.fields import ID_SCHEMA, query_id
from docmind.pagination import page_parameters
from kb import archive_upload, maintenance, selectors, services
from kb.access import editable_kb_ids, kb_default, readable_kb_ids
from kb.models import DocumentStatus
from kb.permissions import EditsObjectKb, HasEditorRoleOrReadOnly, editable_kb, visible_kb
from kb.serializers import (
    ArchiveResultSerializer,
    ArchiveUploadSerializer,
    DocumentMoveSerializer,
    DocumentSerializer,
    DocumentUploadSerializer,
)


class DocumentListView(GenericAPIView):
    permission_classes = [HasEditorRoleOrReadOnly]
    # API keys: see apikeys.authentication (a read key reads; an ask key only asks).
    api_key_scopes = {"get": ("read",)}
    parser_classes = [MultiPartParser, FormParser]
    serializer_class = DocumentSerializer

    def get_queryset(self):
        status_filter = self.request.query_params.get("status") or None
        if status_filter and status_filter not in DocumentStatus.values:
            raise ValidationError({"status": [_("One of %(values)s.") % {"values": ", ".join(DocumentStatus.values)}]})
        readable = readable_kb_ids(self.request.user)
        raw_kb = self.request.query_params.get("kb")
        if raw_kb:
            kb_id = query_id(raw_kb)
            if kb_id not in readable:
                raise Http404(_("No such knowledge base."))
            readable = frozenset({kb_id})
        return selectors.document_list(kb_ids=readable, domain=self.request.query_params.get("domain") or None,
                                       status=status_filter)

    @extend_schema(operation_id="kb_documents_list", responses={200: inline_serializer("PaginatedDocumentList", {
        "count": serializers.IntegerField(), "next": serializers.URLField(allow_null=True),
        "previous": serializers.URLField(allow_null=True), "results": DocumentSerializer(many=True)}),
        400: error_response("an unknown `status`"),
        404: error_response("a `kb` the caller cannot read, or no such page")},
        parameters=[OpenApiParameter("kb", ID_SCHEMA, description="only this knowledge base"),
                    OpenApiParameter("domain", str, description="only this knowledge domain"),
                    OpenApiParameter("status", str, enum=DocumentStatus.values, description="only this status"),
                    *page_parameters()])
    def get(self, request: Request) -> Response:
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(DocumentSerializer(page, many=True).data)

    @extend_schema(request={"multipart/form-data": DocumentUploadSerializer},
                   responses={202: OpenApiResponse(DocumentSerializer, "queued for ingestion"),
                              200: OpenApiResponse(DocumentSerializer, "the same file was already uploaded here"),
                              400: error_response("an invalid request (`fields` names each problem), or the file is "
                                                  "refused: `code` is unsupported, empty, too_large or duplicate "
                                                  "(stored in another knowledge base the caller reads)"),
                              404: error_response("a `kb` the caller cannot read")})
    def post(self, request: Request) -> Response:
        form = DocumentUploadSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        kb_id = form.validated_data.get("kb")
        kb = visible_kb(request.user, kb_id) if kb_id is not None else kb_default()
        if kb.pk not in editable_kb_ids(request.user):
            # Visible (else the line above answered 404), so saying "not allowed" reveals nothing.
            raise PermissionDenied(_("Uploading into this knowledge base needs edit access."))
        try:
            document, created = services.document_create(
                uploaded_file=form.validated_data["file"], title=form.validated_data.get("title") or None,
                domain=form.validated_data.get("domain") or None, user=request.user, kb=kb)
        except services.IngestError as exc:
            return Response({"error": str(exc), "code": exc.code}, status=status.HTTP_400_BAD_REQUEST)
        if created:
            document.chunk_count = 0  # queued just now: the worker has stored none of its chunks yet
        else:
            document = selectors.document_list(kb_ids=[kb.pk]).get(pk=document.pk)
        code = status.HTTP_202_ACCEPTED if created else status.HTTP_200_OK
        return Response(DocumentSerializer(document).data, status=code)


class DocumentArchiveView(GenericAPIView):
    """POST a zip archive: one document per supported file inside it, each queued like a single upload."""

    permission_classes = [HasEditorRoleOrReadOnly]
    parser_classes = [MultiPartParser, FormParser]
    serializer_class = ArchiveUploadSerializer

    @extend_schema(operation_id="kb_documents_archive_create", request={"multipart/form-data": ArchiveUploadSerializer},
                   responses={202: OpenApiResponse(ArchiveResultSerializer, "the archive was read: the files queued "
                                                   "for ingestion, and each entry refused with its reason"),
                              400: error_response("an invalid request (`fields`), or the archive is refused and "
                                                  "nothing was stored: `code` is unreadable (not a zip), damaged, "
                                                  "too_many_entries or too_large (unpacked)"),
                              403: error_response("the caller may read but not edit the knowledge base"),
                              404: error_response("a `kb` the caller cannot read")})
    def post(self, request: Request) -> Response:
        form = ArchiveUploadSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        kb_id = form.validated_data.get("kb")
        kb = visible_kb(request.user, kb_id) if kb_id is not None else kb_default()
        if kb.pk not in editable_kb_ids(request.user):
            raise PermissionDenied(_("Uploading into this knowledge base needs edit access."))
        try:
            outcome = archive_upload.documents_create_from_archive(
                archive=form.validated_data["file"], domain=form.validated_data.get("domain") or None,
                user=request.user, kb=kb)
        except (archive_upload.ArchiveError, services.IngestError) as exc:
            return Response({"error": str(exc), "code": exc.code}, status=status.HTTP_400_BAD_REQUEST)
        documents = selectors.document_list(kb_ids=[kb.pk]).in_bulk([d.pk for _, d in outcome.accepted])
        body = {"accepted": [{"path": path, "document": documents[d.pk]} for path, d in outcome.accepted],
                "refused": outcome.refused}
        return Response(ArchiveResultSerializer(body).data, status=status.HTTP_202_ACCEPTED)


class DocumentDetailView(GenericAPIView):
    permission_classes = [HasEditorRoleOrReadOnly, EditsObjectKb]
    edit_refusals = {"patch": gettext_lazy("Moving documents of this knowledge base needs edit access."),
                     "delete": gettext_lazy("Deleting from this knowledge base needs edit access.")}
    # API keys: see apikeys.authentication (a read key reads; an ask key only asks).
    api_key_scopes = {"get": ("read",)}
    serializer_class = DocumentSerializer

    def get_queryset(self):
        # Outside the readable knowledge bases a document answers 404, like an unknown id.
        return selectors.document_list(kb_ids=readable_kb_ids(self.request.user))

    def get(self, request: Request, pk: int) -> Response:
        return Response(DocumentSerializer(self.get_object()).data)

    @extend_schema(request=DocumentMoveSerializer, responses={200: DocumentSerializer})
    def patch(self, request: Request, pk: int) -> Response:
        """Move the document to another knowledge base and/or domain (edit access to both bases)."""
        document = self.get_object()
        form = DocumentMoveSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        # The target base is checked before anything moves, and the domain (validated by its move) goes
        # first: a refused request changes nothing.
        target = form.validated_data.get("kb")
        target_kb = editable_kb(request.user, target) if target is not None else None
        try:
            if form.validated_data.get("domain"):
                maintenance.document_move(document=document, domain=form.validated_data["domain"])
            if target_kb is not None:
                maintenance.document_move_to_kb(document=document, kb=target_kb)
        except services.IngestError as exc:
            return Response({"error": str(exc), "code": exc.code}, status=status.HTTP_400_BAD_REQUEST)
        return Response(DocumentSerializer(self.get_queryset().get(pk=document.pk)).data)

    def delete(self, request: Request, pk: int) -> Response:
        document = self.get_object()
        services.document_delete(document=document)
        return Response(status=status.HTTP_204_NO_CONTENT)
