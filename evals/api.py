"""/api/eval/: evaluation sets (JSON body or an uploaded file) and runs; staff and editors of the set's base."""
from __future__ import annotations

from django.db.models import Count
from django.http import Http404, HttpResponse
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from chat.models import Message
from chat.selectors import answer_get, answer_question
from docmind.errors import error_response
from docmind.fields import ID_SCHEMA, query_id
from evals import access, services
from evals.importing import ImportFailed, parse_file, template, validate_items
from evals.serializers import (
    ItemAdded,
    ItemFromAnswer,
    ItemSerializer,
    RunCreate,
    RunDetailSerializer,
    RunSerializer,
    SetDetailSerializer,
    SetSerializer,
    SetUpload,
    SetWrite,
)
from kb.access import is_kb_editor

_NOT_FOUND = error_response("no such set or run, or one of a knowledge base the caller cannot see")
_FORBIDDEN = error_response("the caller sees the knowledge base (a view grant is enough) but does not edit it")
_INVALID = error_response("items that cannot be imported (code `invalid_items`): `fields` is keyed `ROW.FIELD`, "
                          "the file's row (the header is row 1) or the item's number; nothing was saved")
_INVALID_FROM_ANSWER = error_response(
    "the item cannot be made (code `invalid_items`, `fields` keyed `1.FIELD`), or no set was named and the answer "
    "touched no knowledge base the caller edits")
_BAD_NUMBER = error_response("a query parameter that must be a whole number is not")
_CONFLICT = error_response("a set of this name exists in the base, or a run of the set is already in progress")


def import_failed(exc: ImportFailed) -> Response:
    """The shared error shape; `fields` is keyed `ROW.FIELD` (the file's row, the header being row 1, or the
    item's number from 1; row 0 is the input as a whole)."""
    fields: dict[str, list[str]] = {}
    for e in exc.errors:
        fields.setdefault(f"{e.row}.{e.field}", []).append(e.message)
    return Response({"error": str(exc), "code": "invalid_items", "fields": fields},
                    status=status.HTTP_400_BAD_REQUEST)


def eval_error(exc: services.EvalError) -> Response:
    return Response({"error": str(exc)}, status=status.HTTP_409_CONFLICT if exc.conflict else 400)


def _query_int(raw: str, name: str) -> int:
    try:
        return int(raw)
    except ValueError:
        raise ValidationError({name: [_("Must be a whole number.")]}) from None


def _counted(queryset):
    return queryset.annotate(item_count=Count("items"))


class SetListView(APIView):
    permission_classes = [IsAuthenticated]
    parser_classes = [JSONParser, MultiPartParser, FormParser]

    @extend_schema(operation_id="eval_sets_list", responses={200: SetSerializer(many=True),
                                                             400: _BAD_NUMBER}, parameters=[
        OpenApiParameter("kb", ID_SCHEMA, description="only the sets of this knowledge base")])
    def get(self, request: Request) -> Response:
        sets = access.sets_for(request.user)
        raw = request.query_params.get("kb")
        if raw is not None:
            kb = query_id(raw)
            if kb is None:
                raise ValidationError({"kb": [_("Must be an id (a whole number from 1).")]})
            sets = sets.filter(kb_id=kb)
        return Response(SetSerializer(_counted(sets), many=True).data)

    @extend_schema(operation_id="eval_sets_create",
                   request={"application/json": SetWrite, "multipart/form-data": SetUpload},
                   responses={201: SetDetailSerializer, 400: _INVALID, 403: _FORBIDDEN, 404: _NOT_FOUND,
                              409: _CONFLICT})
    def post(self, request: Request) -> Response:
        upload = "file" in request.FILES
        form = (SetUpload if upload else SetWrite)(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        kb = access.evaluable_kb(request.user, data["kb"])
        try:
            if upload:
                file = data["file"]
                items = parse_file(file.name or "", file.read())
            else:
                items = validate_items(data["items"])
            eval_set = services.eval_set_create(kb=kb, name=data["name"], items=items,
                                                description=data.get("description", ""), created_by=request.user)
        except ImportFailed as exc:
            return import_failed(exc)
        except services.EvalError as exc:
            return eval_error(exc)
        return Response(SetDetailSerializer(_counted(access.sets_for(request.user)).get(pk=eval_set.pk)).data,
                        status=status.HTTP_201_CREATED)


class SetDetailView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(operation_id="eval_sets_retrieve", responses={200: SetDetailSerializer, 403: _FORBIDDEN,
                                                                 404: _NOT_FOUND})
    def get(self, request: Request, pk: int) -> Response:
        eval_set = access.editable_set(request.user, pk)
        return Response(SetDetailSerializer(_counted(access.sets_for(request.user)).get(pk=eval_set.pk)).data)

    @extend_schema(operation_id="eval_sets_destroy", responses={204: None, 403: _FORBIDDEN, 404: _NOT_FOUND})
    def delete(self, request: Request, pk: int) -> Response:
        services.eval_set_delete(eval_set=access.editable_set(request.user, pk))
        return Response(status=status.HTTP_204_NO_CONTENT)


class SetItemsView(APIView):
    """Add one item to a set."""

    permission_classes = [IsAuthenticated]
    parser_classes = [JSONParser]

    @extend_schema(operation_id="eval_set_items_create", request=ItemSerializer,
                   responses={201: ItemSerializer, 400: _INVALID, 403: _FORBIDDEN, 404: _NOT_FOUND})
    def post(self, request: Request, pk: int) -> Response:
        eval_set = access.editable_set(request.user, pk)
        form = ItemSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            item = services.add_item(eval_set, **form.validated_data)
        except ImportFailed as exc:
            return import_failed(exc)
        except services.EvalError as exc:
            return eval_error(exc)
        return Response(ItemSerializer(item).data, status=status.HTTP_201_CREATED)


class ItemFromAnswerView(APIView):
    """"Add to evaluation set" on a chat answer: its question, with the documents it cited that belong to the
    set's base and the caller reads; the expected answers are the caller's to give."""

    permission_classes = [IsAuthenticated]
    parser_classes = [JSONParser]

    @extend_schema(operation_id="eval_items_from_answer", request=ItemFromAnswer,
                   responses={201: ItemAdded, 400: _INVALID_FROM_ANSWER, 403: _FORBIDDEN,
                              404: error_response("no such answer of the caller's, or no such set")})
    def post(self, request: Request) -> Response:
        if not is_kb_editor(request.user):
            raise PermissionDenied(_("Only staff and editors of a knowledge base may add to evaluation sets."))
        form = ItemFromAnswer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        try:
            answer = answer_get(user=request.user, message_id=data["message"])
        except Message.DoesNotExist:
            raise Http404(_("No such answer.")) from None
        eval_set = access.editable_set(request.user, data["set"]) if data["set"] is not None else None
        log = answer.retrieval_log if isinstance(answer.retrieval_log, dict) else {}
        cited = [c.get("document_id") for c in answer.citations if isinstance(c, dict)] \
            if isinstance(answer.citations, list) else []
        try:
            item = services.item_from_answer(user=request.user, question=answer_question(answer=answer),
                                             document_ids=cited, kb_ids=log.get("kb_ids") or [],
                                             eval_set=eval_set, answers=data["answers"])
        except ImportFailed as exc:
            return import_failed(exc)
        except services.EvalError as exc:
            return eval_error(exc)
        return Response(ItemAdded({"set": item.eval_set, "item": item}).data, status=status.HTTP_201_CREATED)


class SetItemView(APIView):
    permission_classes = [IsAuthenticated]
    parser_classes = [JSONParser]

    def _item(self, request: Request, pk: int, item_id: int):
        eval_set = access.editable_set(request.user, pk)
        item = eval_set.items.filter(pk=item_id).first()
        if item is None:
            raise Http404(_("No such item."))
        return item

    @extend_schema(operation_id="eval_set_items_partial_update", request=ItemSerializer(partial=True),
                   responses={200: ItemSerializer, 400: _INVALID, 403: _FORBIDDEN, 404: _NOT_FOUND})
    def patch(self, request: Request, pk: int, item_id: int) -> Response:
        item = self._item(request, pk, item_id)
        form = ItemSerializer(data=request.data, partial=True)
        form.is_valid(raise_exception=True)
        try:
            item = services.item_update(item=item, **form.validated_data)
        except ImportFailed as exc:
            return import_failed(exc)
        return Response(ItemSerializer(item).data)

    @extend_schema(operation_id="eval_set_items_destroy", responses={204: None, 403: _FORBIDDEN, 404: _NOT_FOUND})
    def delete(self, request: Request, pk: int, item_id: int) -> Response:
        services.item_delete(item=self._item(request, pk, item_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class TemplateView(APIView):
    """An example import file with the expected columns."""

    permission_classes = [IsAuthenticated]

    @extend_schema(operation_id="eval_template_retrieve", responses={
        (200, "text/csv"): bytes, (200, "application/json"): {"type": "array", "items": {"type": "object"}},
        (200, "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"): bytes,
        400: error_response("an unknown type")},
                   parameters=[OpenApiParameter("type", OpenApiTypes.STR, enum=["json", "csv", "xlsx"])])
    def get(self, request: Request) -> HttpResponse:
        kind = request.query_params.get("type", "csv")  # given but empty is no type of the list either
        if kind not in ("json", "csv", "xlsx"):
            raise ValidationError({"type": ["one of json, csv, xlsx"]})
        body, content_type = template(kind)
        response = HttpResponse(body, content_type=content_type)
        response["Content-Disposition"] = f'attachment; filename="evaluation-set-template.{kind}"'
        return response


class RunListView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(operation_id="eval_runs_list", responses={200: RunSerializer(many=True),
                                                             400: _BAD_NUMBER,
                                                             403: _FORBIDDEN, 404: _NOT_FOUND}, parameters=[
        OpenApiParameter("set", ID_SCHEMA, description="only the runs of this set")])
    def get(self, request: Request) -> Response:
        runs = access.runs_for(request.user)
        raw = request.query_params.get("set")
        if raw is not None:
            set_id = query_id(raw)
            if set_id is None:
                raise ValidationError({"set": [_("Must be an id (a whole number from 1).")]})
            runs = runs.filter(eval_set=access.editable_set(request.user, set_id))
        return Response(RunSerializer(runs[:200], many=True).data)

    @extend_schema(operation_id="eval_runs_create", request=RunCreate,
                   responses={202: RunSerializer, 400: error_response("the set has no items"), 403: _FORBIDDEN,
                              404: _NOT_FOUND, 409: _CONFLICT})
    def post(self, request: Request) -> Response:
        form = RunCreate(data=request.data)
        form.is_valid(raise_exception=True)
        eval_set = access.editable_set(request.user, form.validated_data["set"])
        try:
            run = services.run_start(eval_set=eval_set, started_by=request.user)
        except services.EvalError as exc:
            return eval_error(exc)
        return Response(RunSerializer(run).data, status=status.HTTP_202_ACCEPTED)


def _int(request: Request, name: str, default: int, maximum: int) -> int:
    raw = request.query_params.get(name)
    return default if raw is None else max(0, min(_query_int(raw, name), maximum))


class RunDetailView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(operation_id="eval_runs_retrieve", responses={200: RunDetailSerializer, 400: _BAD_NUMBER,
                                                                 403: _FORBIDDEN, 404: _NOT_FOUND}, parameters=[
        OpenApiParameter("failures", OpenApiTypes.BOOL, description="only the items that were not answered right"),
        OpenApiParameter("offset", OpenApiTypes.INT), OpenApiParameter("limit", OpenApiTypes.INT,
                                                                       description="at most 5000; 500 by default")])
    def get(self, request: Request, pk: int) -> Response:
        run = access.editable_run(request.user, pk)
        context = {"failures": request.query_params.get("failures") in ("1", "true"),
                   "offset": _int(request, "offset", 0, 10**9), "limit": _int(request, "limit", 500, 5000)}
        return Response(RunDetailSerializer(run, context=context).data)

    @extend_schema(operation_id="eval_runs_destroy", responses={204: None, 403: _FORBIDDEN, 404: _NOT_FOUND})
    def delete(self, request: Request, pk: int) -> Response:
        services.run_delete(run=access.editable_run(request.user, pk))
        return Response(status=status.HTTP_204_NO_CONTENT)


class RunCancelView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(operation_id="eval_runs_cancel", request=None,
                   responses={200: RunSerializer, 403: _FORBIDDEN, 404: _NOT_FOUND})
    def post(self, request: Request, pk: int) -> Response:
        run = services.run_cancel(run=access.editable_run(request.user, pk))
        return Response(RunSerializer(run).data)
