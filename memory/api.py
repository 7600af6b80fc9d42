"""/api/memories/: the caller's own active memories — list, create, edit, forget one, forget all."""
from __future__ import annotations

from django.db.models import QuerySet
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response

from docmind.fields import NotBlankTextField
from memory import selectors, services
from memory.models import MemorySource, MemoryType, UserMemory
from memory.types import MemoryCandidate


class UserMemorySerializer(serializers.ModelSerializer):
    class Meta:
        model = UserMemory
        fields = ["id", "memory_type", "content", "source", "access_count", "created_at", "updated_at"]
        read_only_fields = fields


class MemorySavedSerializer(UserMemorySerializer):
    action = serializers.CharField(help_text="what the save did: created, superseded, exact-duplicate…")
    replaced = serializers.ListField(child=serializers.IntegerField(), help_text="ids of memories it superseded")

    class Meta(UserMemorySerializer.Meta):
        fields = [*UserMemorySerializer.Meta.fields, "action", "replaced"]
        read_only_fields = fields


class MemoryWriteSerializer(serializers.Serializer):
    content = NotBlankTextField(max_length=services.MAX_CONTENT_CHARS, trim_whitespace=True)
    memory_type = serializers.ChoiceField(choices=MemoryType.choices, default=MemoryType.FACT)


class MemoryEditSerializer(serializers.Serializer):
    openapi_any_of = ("content", "memory_type")  # an edit that changes nothing is refused

    content = NotBlankTextField(max_length=services.MAX_CONTENT_CHARS, trim_whitespace=True, required=False)
    memory_type = serializers.ChoiceField(choices=MemoryType.choices, required=False)


class UserMemoryViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = UserMemorySerializer
    # JSON only: a form body's blank optional field reads as absent in DRF, so `memory_type=` beside a new
    # content was accepted as an edit of the content alone instead of refused.
    parser_classes = [JSONParser]
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]

    def get_queryset(self) -> QuerySet[UserMemory]:
        if getattr(self, "swagger_fake_view", False):  # schema generation has no signed-in user
            return UserMemory.objects.none()
        # Another user's id is simply not found (404), never a 403 that confirms it exists.
        return selectors.memory_list(user=self.request.user)

    @extend_schema(request=MemoryWriteSerializer, responses={
        201: OpenApiResponse(MemorySavedSerializer, "saved (or it superseded older memories: `replaced`)"),
        200: OpenApiResponse(MemorySavedSerializer, "an identical memory already existed; nothing changed")})
    def create(self, request: Request) -> Response:
        data = MemoryWriteSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            outcome = services.memory_save(
                user_id=request.user.pk, source=MemorySource.USER,
                candidate=MemoryCandidate(memory_type=data.validated_data["memory_type"],
                                          content=data.validated_data["content"]))
        except (services.MemoryInputError, ValueError) as exc:
            raise ValidationError({"content": [str(exc)]}) from None
        body = {**UserMemorySerializer(outcome.memory).data, "action": outcome.action,
                "replaced": list(outcome.replaced)}
        created = outcome.action != "exact-duplicate"
        return Response(body, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)

    @extend_schema(request=MemoryEditSerializer, responses=UserMemorySerializer)
    def partial_update(self, request: Request, pk: str | None = None) -> Response:
        memory = self.get_object()
        data = MemoryEditSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        if not data.validated_data:
            raise ValidationError({"detail": [_("Nothing to change: send content and/or memory_type.")]})
        try:
            row = services.memory_update(user_id=request.user.pk, memory_id=memory.pk, **data.validated_data)
        except services.MemoryInputError as exc:
            raise ValidationError({"content": [str(exc)]}) from None
        return Response(UserMemorySerializer(row).data)

    def destroy(self, request: Request, pk: str | None = None) -> Response:
        memory = self.get_object()
        services.memory_forget(user_id=request.user.pk, memory_id=memory.pk)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(request=None, responses=inline_serializer("ForgetAllResult", {
        "forgotten": serializers.IntegerField(help_text="how many memories were forgotten")}))
    @action(detail=False, methods=["post"], url_path="forget-all")
    def forget_all(self, request: Request) -> Response:
        return Response({"forgotten": services.memory_forget_all(user_id=request.user.pk)})
