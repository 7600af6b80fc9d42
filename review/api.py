"""/api/reviews/: the review queue of the bases the caller edits, and an editor's decision on an item."""
from __future__ import annotations

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from docmind.errors import error_response
from docmind.fields import ID_SCHEMA, NOT_BLANK_TEXT, NotBlankTextField, query_id, query_moment
from docmind.pagination import Pagination, page_parameters
from evals import access as eval_access
from evals.api import eval_error, import_failed
from evals.importing import ImportFailed
from evals.serializers import AnswersField, ItemAdded
from evals.services import EvalError
from kb.permissions import IsKbEditor
from review import selectors, services
from review.models import ReviewItem, ReviewReason, ReviewStatus


class ReviewItemSerializer(serializers.ModelSerializer):
    resolved_by = serializers.CharField(source="resolved_by.username", default=None, read_only=True,
                                        allow_null=True)
    evidence = serializers.ListField(child=serializers.DictField(), read_only=True)

    class Meta:
        model = ReviewItem
        fields = ["id", "kb", "message", "reason", "comment", "question", "answer", "evidence", "confidence_score",
                  "confidence_band", "status", "resolved_by", "resolved_at", "qa_pair", "created_at"]
        read_only_fields = fields


class ReviewResolveSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=services.ReviewAction.ALL)
    answer = NotBlankTextField(max_length=20_000, required=False, help_text="the correct answer (needed by `curate`)")


# `curate` needs the answer, the other actions do not: said in the schema as one of two shapes.
_RESOLVE_BODY = {
    "type": "object",
    "properties": {"action": {"type": "string", "enum": list(services.ReviewAction.ALL)},
                   "answer": {"type": "string", "maxLength": 20_000, "pattern": NOT_BLANK_TEXT,
                              "description": "the correct answer (needed by `curate`)"}},
    "required": ["action"],
    "oneOf": [{"properties": {"action": {"enum": [services.ReviewAction.CURATE]}}, "required": ["action", "answer"]},
              {"properties": {"action": {"enum": [services.ReviewAction.RESOLVE, services.ReviewAction.DISMISS]}}}],
}


_PAGE = inline_serializer("PaginatedReviewItemList", {
    "count": serializers.IntegerField(), "next": serializers.URLField(allow_null=True),
    "previous": serializers.URLField(allow_null=True), "results": ReviewItemSerializer(many=True)})


def _queue(request: Request):
    # IsKbEditor has let only editors and administrators in; the selector cuts the queue to what each may see.
    return selectors.review_items_for(request.user)


class ReviewListView(APIView):
    permission_classes = [IsAuthenticated, IsKbEditor]

    @extend_schema(operation_id="reviews_list", responses={200: _PAGE, 400: error_response("a bad filter value"),
                                                                  404: error_response("no such page")},
                   parameters=[OpenApiParameter("kb", ID_SCHEMA, description="only this knowledge base"),
                               OpenApiParameter("status", str, enum=ReviewStatus.values,
                                                description="only this status"),
                               OpenApiParameter("reason", str, enum=ReviewReason.values,
                                                description="only this reason"),
                               OpenApiParameter("since", OpenApiTypes.DATETIME, description="created at or after"),
                               OpenApiParameter("until", OpenApiTypes.DATETIME, description="created before"),
                               *page_parameters()])
    def get(self, request: Request) -> Response:
        items = _queue(request)
        params = request.query_params
        if params.get("kb"):
            kb = query_id(params["kb"])
            if kb is None:
                raise ValidationError({"kb": ["a knowledge-base id"]})
            items = items.filter(kb_id=kb)
        for name, choices in (("status", ReviewStatus.values), ("reason", ReviewReason.values)):
            if params.get(name):
                if params[name] not in choices:
                    raise ValidationError({name: [f"one of {', '.join(choices)}"]})
                items = items.filter(**{name: params[name]})
        if "since" in params:
            items = items.filter(created_at__gte=query_moment(params["since"], "since"))
        if "until" in params:
            items = items.filter(created_at__lt=query_moment(params["until"], "until"))
        paginator = Pagination()
        page = paginator.paginate_queryset(items.order_by("-created_at", "-id"), request, view=self)
        return paginator.get_paginated_response(ReviewItemSerializer(page, many=True).data)


class ReviewResolveView(APIView):
    permission_classes = [IsAuthenticated, IsKbEditor]

    @extend_schema(request={"application/json": _RESOLVE_BODY},
                   responses={200: ReviewItemSerializer, 400: error_response("`curate` without an answer")})
    def post(self, request: Request, pk: int) -> Response:
        """Resolve (fixed), dismiss (nothing wrong) or curate (write the correct answer, served from now on)."""
        item = _queue(request).filter(pk=pk).first()
        if item is None:
            raise Http404("no such review item")
        form = ReviewResolveSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            item = services.review_resolve(item=item, action=form.validated_data["action"], user=request.user,
                                           answer=form.validated_data.get("answer"))
        except services.ReviewError as exc:
            return Response({"error": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(ReviewItemSerializer(item).data)


class ReviewToEvalSerializer(serializers.Serializer):
    set = serializers.IntegerField(required=False, allow_null=True, default=None,
                                   help_text="The evaluation set to add to; absent or null: the default set of the "
                                             "item's knowledge base.")
    answers = AnswersField(required=False, default=list,
                           help_text="Expected answers: alternatives, each a list of texts that must all appear.")


class ReviewToEvalView(APIView):
    permission_classes = [IsAuthenticated, IsKbEditor]

    @extend_schema(operation_id="reviews_add_to_eval", request=ReviewToEvalSerializer,
                   responses={201: ItemAdded,
                              400: error_response("the item cannot be made (code `invalid_items`, `fields` keyed "
                                                  "`1.FIELD`)"),
                              403: error_response("the set's base is one the caller reads but does not edit"),
                              404: error_response("no such review item or set for the caller")})
    def post(self, request: Request, pk: int) -> Response:
        """Add the item's question to an evaluation set, with the documents its answer cited."""
        item = _queue(request).select_related("message").filter(pk=pk).first()
        if item is None:
            raise Http404("no such review item")
        form = ReviewToEvalSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        eval_set = eval_access.editable_set(request.user, data["set"]) if data["set"] is not None else None
        try:
            added = services.review_to_eval(item=item, user=request.user, eval_set=eval_set,
                                            answers=data["answers"])
        except ImportFailed as exc:
            return import_failed(exc)
        except EvalError as exc:
            return eval_error(exc)
        return Response(ItemAdded({"set": added.eval_set, "item": added}).data, status=status.HTTP_201_CREATED)
