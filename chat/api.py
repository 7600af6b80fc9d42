"""`/api/conversations/`: the caller's own conversations only; another user's id is a 404."""
from __future__ import annotations

from django.db.models import QuerySet
from rest_framework import mixins, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from chat import selectors, services
from chat.models import Conversation
from chat.serializers import ConversationDetailSerializer, ConversationRenameSerializer, ConversationSerializer


class ConversationViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.DestroyModelMixin,
                          viewsets.GenericViewSet):
    http_method_names = ["get", "patch", "delete", "head", "options"]

    def get_queryset(self) -> QuerySet[Conversation]:
        if getattr(self, "swagger_fake_view", False):  # schema generation has no signed-in user
            return Conversation.objects.none()
        rows = selectors.conversation_list(user=self.request.user)
        return rows.prefetch_related("messages") if self.action == "retrieve" else rows

    def get_serializer_class(self) -> type:
        return ConversationDetailSerializer if self.action == "retrieve" else ConversationSerializer

    def partial_update(self, request: Request, pk: str | None = None) -> Response:
        conversation = self.get_object()
        data = ConversationRenameSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.conversation_rename(conversation=conversation, title=data.validated_data["title"])
        return Response(ConversationSerializer(self.get_queryset().get(pk=conversation.pk)).data)

    def perform_destroy(self, instance: Conversation) -> None:
        services.conversation_delete(conversation=instance)
