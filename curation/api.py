"""/api/kb/qa-pairs/ (curated answers) and /api/kb/chunks/ (edit a chunk, its revisions, restore one).

Editors of a base and administrators only: a member gets 403; a pair or chunk of a base the caller cannot
read answers 404, like an unknown id.
"""
from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from curation import selectors, services
from curation.models import QaPair
from docmind.errors import error_response
from docmind.fields import ID_SCHEMA, IdField, NotBlankTextField, query_id
from docmind.pagination import Pagination, page_parameters
from kb import editing
from kb.access import editable_kb_ids, readable_kb_ids
from kb.models import Chunk
from kb.permissions import IsKbEditor, editable_kb, editor_kb_ids

_EDITORS_ONLY = "only editors of a knowledge base and administrators manage its curated answers and chunks"


class QaPairSerializer(serializers.ModelSerializer):
    author = serializers.CharField(source="author.username", default=None, read_only=True, allow_null=True)
    documents = serializers.SerializerMethodField()
    origin = serializers.CharField(source="source", read_only=True, help_text="review, manual or import")

    class Meta:
        model = QaPair
        fields = ["id", "kb", "question", "answer", "documents", "is_active", "origin", "author", "created_at",
                  "updated_at"]
        read_only_fields = fields

    def get_documents(self, pair: QaPair) -> list[int]:
        return sorted(d.pk for d in pair.documents.all())


class QaPairWrite(serializers.Serializer):
    kb = IdField()
    question = NotBlankTextField(max_length=services.MAX_QUESTION_CHARS)
    answer = NotBlankTextField(max_length=services.MAX_ANSWER_CHARS)
    documents = serializers.ListField(child=IdField(), required=False, default=list,
                                      max_length=50)


class QaPairPatch(serializers.Serializer):
    question = NotBlankTextField(max_length=services.MAX_QUESTION_CHARS, required=False)
    answer = NotBlankTextField(max_length=services.MAX_ANSWER_CHARS, required=False)
    documents = serializers.ListField(child=IdField(), required=False, max_length=50)
    is_active = serializers.BooleanField(required=False)


class QaPairImport(serializers.Serializer):
    kb = IdField()
    file = serializers.FileField(help_text="CSV or XLSX: `question` and `answer` columns (or the first two)")


_PAGE = inline_serializer("PaginatedQaPairList", {
    "count": serializers.IntegerField(), "next": serializers.URLField(allow_null=True),
    "previous": serializers.URLField(allow_null=True), "results": QaPairSerializer(many=True)})


class QaPairListView(APIView):
    permission_classes = [IsAuthenticated, IsKbEditor]

    @extend_schema(operation_id="kb_qa_pairs_list",
                   responses={200: _PAGE, 404: error_response("a `kb` the caller does not edit, or no such page")},
                   parameters=[OpenApiParameter("kb", ID_SCHEMA, description="only this knowledge base"),
                               *page_parameters()])
    def get(self, request: Request) -> Response:
        editable = editor_kb_ids(request.user, _EDITORS_ONLY)
        raw = request.query_params.get("kb")
        kb = None
        if raw:
            kb = query_id(raw)
            if kb not in editable:
                raise Http404("no such knowledge base")

        paginator = Pagination()
        page = paginator.paginate_queryset(selectors.qa_pair_list(kb_ids=editable, kb=kb), request, view=self)
        return paginator.get_paginated_response(QaPairSerializer(page, many=True).data)

    @extend_schema(request=QaPairWrite, responses={201: QaPairSerializer,
                                                   400: error_response("an empty question or answer, or a "
                                                                       "document of another base"),
                                                   404: error_response("a `kb` the caller cannot read")})
    def post(self, request: Request) -> Response:
        editor_kb_ids(request.user, _EDITORS_ONLY)
        form = QaPairWrite(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        kb = editable_kb(request.user, data["kb"])
        try:
            pair = services.qa_pair_create(kb=kb, question=data["question"], answer=data["answer"],
                                           author=request.user, document_ids=data["documents"])
        except services.CurationError as exc:
            return Response({"error": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(QaPairSerializer(pair).data, status=status.HTTP_201_CREATED)


class QaPairDetailView(APIView):
    permission_classes = [IsAuthenticated, IsKbEditor]

    def _pair(self, request: Request, pk: int) -> QaPair:
        pair = selectors.qa_pair_list(kb_ids=editor_kb_ids(request.user, _EDITORS_ONLY)).filter(pk=pk).first()
        if pair is None:
            raise Http404("no such curated answer")
        return pair

    @extend_schema(responses=QaPairSerializer)
    def get(self, request: Request, pk: int) -> Response:
        return Response(QaPairSerializer(self._pair(request, pk)).data)

    @extend_schema(request=QaPairPatch, responses={200: QaPairSerializer,
                                                   400: error_response("an empty question or answer")})
    def patch(self, request: Request, pk: int) -> Response:
        pair = self._pair(request, pk)
        form = QaPairPatch(data=request.data, partial=True)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        try:
            pair = services.qa_pair_update(pair=pair, question=data.get("question"), answer=data.get("answer"),
                                           document_ids=data.get("documents"), is_active=data.get("is_active"),
                                           author=request.user)
        except services.CurationError as exc:
            return Response({"error": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(QaPairSerializer(self._pair(request, pair.pk)).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, pk: int) -> Response:
        services.qa_pair_delete(pair=self._pair(request, pk))
        return Response(status=status.HTTP_204_NO_CONTENT)


class QaPairImportView(APIView):
    permission_classes = [IsAuthenticated, IsKbEditor]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(request={"multipart/form-data": QaPairImport},
                   responses={201: inline_serializer("QaPairImported", {"created": serializers.IntegerField()}),
                              400: error_response("an unreadable file or a bad row (named by its number)"),
                              404: error_response("a `kb` the caller cannot read")})
    def post(self, request: Request) -> Response:
        editor_kb_ids(request.user, _EDITORS_ONLY)
        form = QaPairImport(data=request.data)
        form.is_valid(raise_exception=True)
        kb = editable_kb(request.user, form.validated_data["kb"])
        upload = form.validated_data["file"]
        try:
            pairs = services.qa_pairs_import(kb=kb, name=upload.name or "", data=upload.read(), author=request.user)
        except services.CurationError as exc:
            return Response({"error": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response({"created": len(pairs)}, status=status.HTTP_201_CREATED)


# -- chunks ------------------------------------------------------------------------------------------------
class ChunkSerializer(serializers.ModelSerializer):
    kb = serializers.IntegerField(source="document.kb_id", read_only=True)
    revision = serializers.SerializerMethodField()

    class Meta:
        model = Chunk
        fields = ["id", "document", "kb", "level", "ordinal", "context", "content", "revision"]
        read_only_fields = fields

    def get_revision(self, chunk: Chunk) -> int | None:
        """The newest revision (null: never edited)."""
        return chunk.revisions.order_by("-history_id").values_list("history_id", flat=True).first()


class ChunkPatch(serializers.Serializer):
    openapi_required = ("content",)

    content = NotBlankTextField(max_length=editing.MAX_CHUNK_CHARS)


class RevisionSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="history_id")
    content = serializers.CharField()
    author = serializers.CharField(source="history_user.username", default=None, allow_null=True)
    created_at = serializers.DateTimeField(source="history_date")
    reason = serializers.CharField(source="history_change_reason", default="", allow_null=True)
    diff = serializers.CharField(help_text="unified diff from the revision before this one")


def _editable_chunk(request: Request, pk: int) -> Chunk:
    """A chunk of a base the caller edits; 404 for an unknown chunk or one of an unreadable base, 403 for one
    it may only read."""
    chunk = Chunk.objects.select_related("document").filter(pk=pk).first()
    if chunk is None or chunk.document.kb_id not in readable_kb_ids(request.user):
        raise Http404("no such chunk")
    if chunk.document.kb_id not in editable_kb_ids(request.user):
        raise PermissionDenied("editing chunks of this knowledge base needs edit access")
    return chunk


class ChunkDetailView(APIView):
    permission_classes = [IsAuthenticated, IsKbEditor]
    parser_classes = [JSONParser]

    @extend_schema(responses=ChunkSerializer)
    def get(self, request: Request, pk: int) -> Response:
        return Response(ChunkSerializer(_editable_chunk(request, pk)).data)

    @extend_schema(request=ChunkPatch, responses={200: ChunkSerializer,
                                                  400: error_response("empty text, or the document is being "
                                                                      "indexed")})
    def patch(self, request: Request, pk: int) -> Response:
        """Replace the chunk's text: the old text stays as a revision; the chunk is re-embedded and re-indexed."""
        chunk = _editable_chunk(request, pk)
        form = ChunkPatch(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            chunk = editing.chunk_edit(chunk=chunk, content=form.validated_data["content"], user=request.user)
        except editing.ChunkEditError as exc:
            return Response({"error": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(ChunkSerializer(_editable_chunk(request, chunk.pk)).data)


def revisions_with_diffs(chunk: Chunk) -> list[dict]:
    revisions = list(chunk.revisions.select_related("history_user").order_by("history_id"))
    rows, before = [], ""
    for revision in revisions:
        revision.diff = editing.revision_diff(before, revision.content) if before else ""
        before = revision.content
        rows.append(revision)
    return list(reversed(rows))


class ChunkRevisionsView(APIView):
    permission_classes = [IsAuthenticated, IsKbEditor]

    @extend_schema(responses=RevisionSerializer(many=True))
    def get(self, request: Request, pk: int) -> Response:
        """Every revision, newest first, each with its author, time and diff from the one before."""
        chunk = _editable_chunk(request, pk)
        return Response(RevisionSerializer(revisions_with_diffs(chunk), many=True).data)


class ChunkRestoreView(APIView):
    permission_classes = [IsAuthenticated, IsKbEditor]

    @extend_schema(request=None, responses={200: ChunkSerializer, 404: error_response("no such chunk or revision"),
                                            400: error_response("the document is being indexed")})
    def post(self, request: Request, pk: int, rev: int) -> Response:
        """Make an earlier revision's text the current one (recorded as a new revision)."""
        chunk = _editable_chunk(request, pk)
        try:
            chunk = editing.chunk_restore(chunk=chunk, revision_id=rev, user=request.user)
        except Chunk.DoesNotExist:
            raise Http404("no such revision of this chunk") from None
        except editing.ChunkEditError as exc:
            return Response({"error": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(ChunkSerializer(_editable_chunk(request, chunk.pk)).data)
