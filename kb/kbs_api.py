"""/api/kbs/: knowledge bases the caller can ask or read, and their view/read/edit grants.

An id the caller cannot read answers 404 exactly like an unknown one, so the API never confirms
that a knowledge base exists; one it can read but not edit answers 403 to a change.
"""
from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from docmind.errors import error_response
from docmind.fields import NameField, TextField
from kb import access, services
from kb.models import KbAccess, KbGrant, KnowledgeBase
from kb.permissions import editable_kb, visible_kb


class KnowledgeBaseSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", default=None, read_only=True, allow_null=True)
    can_edit = serializers.SerializerMethodField()
    access = serializers.SerializerMethodField(help_text="The caller's access: view (answers and snippets), "
                                               "read (also the originals) or edit.")

    class Meta:
        model = KnowledgeBase
        fields = ["id", "name", "description", "owner", "is_default", "can_edit", "access", "created_at",
                  "updated_at"]
        read_only_fields = fields

    def get_can_edit(self, kb: KnowledgeBase) -> bool:
        return kb.pk in self.context.get("editable", frozenset())

    def get_access(self, kb: KnowledgeBase) -> str:
        if kb.pk in self.context.get("editable", frozenset()):
            return KbAccess.EDIT
        return KbAccess.READ if kb.pk in self.context.get("readable", frozenset()) else KbAccess.VIEW


class KnowledgeBaseWrite(serializers.Serializer):
    name = NameField(max_length=128)
    description = TextField(required=False, allow_blank=True, default="")


class KnowledgeBasePatch(serializers.Serializer):
    openapi_any_of = ("name", "description")  # an edit that changes nothing is refused

    name = NameField(max_length=128, required=False)
    description = TextField(required=False, allow_blank=True)

    def validate(self, attrs: dict) -> dict:
        # A body naming neither field (an empty object, or a form body that parsed to nothing) changes nothing:
        # answering 200 would tell the client its edit was applied.
        if not attrs:
            raise serializers.ValidationError(_("Give a name, a description or both."))
        return attrs


class GrantSerializer(serializers.ModelSerializer):
    user = serializers.CharField(source="user.username", default=None, read_only=True, allow_null=True)
    group = serializers.CharField(source="group.name", default=None, read_only=True, allow_null=True)

    class Meta:
        model = KbGrant
        fields = ["id", "user", "group", "access", "created_at"]
        read_only_fields = fields


class GrantWrite(serializers.Serializer):
    openapi_one_of = ("user", "group")

    user = NameField(required=False, max_length=150)
    group = NameField(required=False, max_length=150)
    access = serializers.ChoiceField(choices=KbAccess.choices, required=False, default=KbAccess.READ)

    def validate(self, data):
        if ("user" in data) == ("group" in data):
            raise serializers.ValidationError(_("Give a grant to a user or to a group, not both or neither."))
        return data


def _levels(user) -> dict[str, frozenset[int]]:
    return {"editable": access.editable_kb_ids(user), "readable": access.readable_kb_ids(user)}


def _error(exc: Exception) -> Response:
    code = status.HTTP_409_CONFLICT if isinstance(exc, services.KbNameTaken) else status.HTTP_400_BAD_REQUEST
    return Response({"error": str(exc)}, status=code)


_NAME_TAKEN = error_response("another knowledge base has this name")


class KnowledgeBaseListView(APIView):
    permission_classes = [IsAuthenticated]
    # API keys: see apikeys.authentication (a read key reads; an ask key only asks).
    api_key_scopes = {"get": ("read",)}

    @extend_schema(responses=KnowledgeBaseSerializer(many=True))
    def get(self, request: Request) -> Response:
        return Response(KnowledgeBaseSerializer(access.askable_kbs(request.user), many=True,
                                                context=_levels(request.user)).data)

    @extend_schema(request=KnowledgeBaseWrite, responses={201: KnowledgeBaseSerializer, 409: _NAME_TAKEN})
    def post(self, request: Request) -> Response:
        if not access.has_editor_role(request.user):
            raise PermissionDenied(_("Only administrators and knowledge-base editors may create knowledge bases."))
        form = KnowledgeBaseWrite(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            kb = services.kb_create(owner=request.user, **form.validated_data)
        except services.IngestError as exc:
            return _error(exc)
        return Response(KnowledgeBaseSerializer(kb, context={"editable": {kb.pk}, "readable": {kb.pk}}).data,
                        status=status.HTTP_201_CREATED)


class KnowledgeBaseDetailView(APIView):
    permission_classes = [IsAuthenticated]
    # API keys: see apikeys.authentication (a read key reads; an ask key only asks).
    api_key_scopes = {"get": ("read",)}

    @extend_schema(responses=KnowledgeBaseSerializer)
    def get(self, request: Request, pk: int) -> Response:
        kb = visible_kb(request.user, pk)
        return Response(KnowledgeBaseSerializer(kb, context=_levels(request.user)).data)

    @extend_schema(request=KnowledgeBasePatch, responses={200: KnowledgeBaseSerializer, 409: _NAME_TAKEN})
    def patch(self, request: Request, pk: int) -> Response:
        kb = editable_kb(request.user, pk)
        form = KnowledgeBasePatch(data=request.data, partial=True)
        form.is_valid(raise_exception=True)
        try:
            kb = services.kb_update(kb=kb, **form.validated_data)
        except services.IngestError as exc:
            return _error(exc)
        return Response(KnowledgeBaseSerializer(kb, context={"editable": {kb.pk}, "readable": {kb.pk}}).data)

    @extend_schema(responses={204: None, 409: error_response("the default base, or a base that still holds "
                                                             "documents, cannot be deleted")})
    def delete(self, request: Request, pk: int) -> Response:
        kb = editable_kb(request.user, pk)
        try:
            services.kb_delete(kb=kb)
        except services.IngestError as exc:
            return Response({"error": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(status=status.HTTP_204_NO_CONTENT)


class KnowledgeBaseGrantsView(APIView):
    """Grants of one knowledge base: editors of that base and administrators only."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses=GrantSerializer(many=True))
    def get(self, request: Request, pk: int) -> Response:
        kb = editable_kb(request.user, pk)
        grants = kb.grants.select_related("user", "group").order_by("id")
        return Response(GrantSerializer(grants, many=True).data)

    @extend_schema(request=GrantWrite, responses={201: GrantSerializer,
                                                  404: error_response("no such knowledge base, user or group")})
    def post(self, request: Request, pk: int) -> Response:
        kb = editable_kb(request.user, pk)
        holder = self._holder(request, request.data)
        grant = services.kb_grant(kb=kb, access=self._form.validated_data["access"], **holder)
        return Response(GrantSerializer(grant).data, status=status.HTTP_201_CREATED)

    # A DELETE with a body {user|group} has no place in OpenAPI: kept for existing clients, unpublished;
    # DELETE /api/kbs/{id}/grants/{grant_id}/ is the documented way.
    @extend_schema(exclude=True)
    def delete(self, request: Request, pk: int) -> Response:
        kb = editable_kb(request.user, pk)
        if not services.kb_revoke(kb=kb, **self._holder(request, request.data)):
            return Response({"error": _("No such grant.")}, status=status.HTTP_404_NOT_FOUND)
        return Response(status=status.HTTP_204_NO_CONTENT)

    def _holder(self, request: Request, data: Any) -> dict:
        self._form = GrantWrite(data=data)
        self._form.is_valid(raise_exception=True)
        data = self._form.validated_data
        if "user" in data:
            user = get_user_model().objects.filter(username=data["user"]).first()
            if user is None:
                raise NotFound(_("No such user."))
            return {"user": user}
        group = Group.objects.filter(name=data["group"]).first()
        if group is None:
            raise NotFound(_("No such group."))
        return {"group": group}


class KnowledgeBaseGrantView(APIView):
    """One grant of a knowledge base, by its id: editors of that base and administrators only."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={204: None})
    def delete(self, request: Request, pk: int, grant_id: int) -> Response:
        kb = editable_kb(request.user, pk)
        grant = kb.grants.select_related("user", "group").filter(pk=grant_id).first()
        if grant is None:
            raise NotFound(_("No such grant."))
        services.kb_revoke(kb=kb, user=grant.user, group=grant.group)
        return Response(status=status.HTTP_204_NO_CONTENT)
