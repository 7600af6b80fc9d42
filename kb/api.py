"""Document API: list, upload (202, ingested in the background), detail, delete."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from docmind.roles import IsKbEditorOrReadOnly
from kb import selectors, services
from kb.models import DocumentStatus
from kb.serializers import DocumentSerializer, DocumentUploadSerializer


class DocumentListView(GenericAPIView):
    permission_classes = [IsKbEditorOrReadOnly]
    parser_classes = [MultiPartParser, FormParser]
    serializer_class = DocumentSerializer

    def get_queryset(self):
        status_filter = self.request.query_params.get("status") or None
        if status_filter and status_filter not in DocumentStatus.values:
            status_filter = "-"  # an unknown status matches nothing rather than everything
        return selectors.document_list(domain=self.request.query_params.get("domain") or None, status=status_filter)

    @extend_schema(operation_id="kb_documents_list", responses=inline_serializer("PaginatedDocumentList", {
        "count": serializers.IntegerField(), "next": serializers.URLField(allow_null=True),
        "previous": serializers.URLField(allow_null=True), "results": DocumentSerializer(many=True)}))
    def get(self, request: Request) -> Response:
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(DocumentSerializer(page, many=True).data)

    @extend_schema(request={"multipart/form-data": DocumentUploadSerializer},
                   responses={202: DocumentSerializer, 200: DocumentSerializer})
    def post(self, request: Request) -> Response:
        form = DocumentUploadSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            document, created = services.document_create(
                uploaded_file=form.validated_data["file"], title=form.validated_data.get("title") or None,
                domain=form.validated_data.get("domain") or None, user=request.user)
        except services.IngestError as exc:
            return Response({"error": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        document = selectors.document_list().get(pk=document.pk)
        code = status.HTTP_202_ACCEPTED if created else status.HTTP_200_OK
        return Response(DocumentSerializer(document).data, status=code)


class DocumentDetailView(GenericAPIView):
    permission_classes = [IsKbEditorOrReadOnly]
    serializer_class = DocumentSerializer

    def get_queryset(self):
        return selectors.document_list()

    def get(self, request: Request, pk: int) -> Response:
        return Response(DocumentSerializer(self.get_object()).data)

    def delete(self, request: Request, pk: int) -> Response:
        services.document_delete(document=self.get_object())
        return Response(status=status.HTTP_204_NO_CONTENT)
