"""/api/audit/: the audit trail, newest first, for administrators only; `?format=csv` exports it."""
from __future__ import annotations

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit import selectors
from docmind.errors import error_response
from docmind.fields import query_moment
from docmind.pagination import Pagination, page_parameters
from kb.permissions import IsAdministrator


class AuditEntrySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    timestamp = serializers.CharField()
    actor = serializers.CharField(allow_null=True)
    action = serializers.ChoiceField(choices=list(selectors.ACTIONS))
    event = serializers.CharField(allow_blank=True)
    object_type = serializers.CharField()
    object_id = serializers.CharField(allow_blank=True)
    object = serializers.CharField(allow_blank=True)
    changes = serializers.DictField()
    remote_addr = serializers.CharField(allow_null=True)


_PAGE = inline_serializer("PaginatedAuditEntryList", {
    "count": serializers.IntegerField(), "next": serializers.URLField(allow_null=True),
    "previous": serializers.URLField(allow_null=True), "results": AuditEntrySerializer(many=True)})


class AuditPagination(Pagination):
    page_size = 100


class AuditListView(APIView):
    permission_classes = [IsAuthenticated, IsAdministrator]

    @extend_schema(operation_id="audit_list", responses={200: _PAGE, 400: error_response("a bad filter value"),
                                                           404: error_response("no such page")},
                   parameters=[OpenApiParameter("actor", str, description="username of who did it"),
                               OpenApiParameter("action", str, enum=list(selectors.ACTIONS),
                                                description="create, update, delete or access (sign-ins)"),
                               OpenApiParameter("model", str, description="kind of object, `app_label.model`"),
                               OpenApiParameter("since", OpenApiTypes.DATETIME, description="at or after"),
                               OpenApiParameter("until", OpenApiTypes.DATETIME, description="before"),
                               *page_parameters(AuditPagination.page_size)])
    def get(self, request: Request) -> Response:
        params = request.query_params
        action = params.get("action") or None
        if action is not None and action not in selectors.ACTIONS:
            raise ValidationError({"action": [f"one of {', '.join(selectors.ACTIONS)}"]})
        model = params.get("model") or None
        if model is not None and "." not in model:
            raise ValidationError({"model": ["app_label.model, e.g. kb.document"]})
        entries = selectors.audit_entries(
            actor=params.get("actor") or None, action=action, model=model,
            since=query_moment(params["since"], "since") if "since" in params else None,
            until=query_moment(params["until"], "until") if "until" in params else None)
        paginator = AuditPagination()
        page = paginator.paginate_queryset(entries, request, view=self)
        return paginator.get_paginated_response([selectors.entry_row(e) for e in page])


class AuditExportView(APIView):
    permission_classes = [IsAuthenticated, IsAdministrator]

    @extend_schema(operation_id="audit_export", responses={(200, "text/csv"): str},
                   parameters=[OpenApiParameter("actor", str), OpenApiParameter("action", str,
                                                                                enum=list(selectors.ACTIONS)),
                               OpenApiParameter("since", OpenApiTypes.DATETIME),
                               OpenApiParameter("until", OpenApiTypes.DATETIME)])
    def get(self, request: Request) -> StreamingHttpResponse:
        """The filtered trail as CSV (the same filters as the list)."""
        params = request.query_params
        action = params.get("action") or None
        if action is not None and action not in selectors.ACTIONS:
            raise ValidationError({"action": [f"one of {', '.join(selectors.ACTIONS)}"]})
        entries = selectors.audit_entries(
            actor=params.get("actor") or None, action=action,
            since=query_moment(params["since"], "since") if "since" in params else None,
            until=query_moment(params["until"], "until") if "until" in params else None)
        response = StreamingHttpResponse(selectors.csv_lines(entries.iterator(chunk_size=2000)),
                                         content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="audit.csv"'
        return response
